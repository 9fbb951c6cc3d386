// The floors' Next app: the app's build setup (Next's default bundler, the app router), nothing
// of Parley's. reactStrictMode as in the app's next.config.mjs.
/** @type {import('next').NextConfig} */
export default { reactStrictMode: true, poweredByHeader: false };
