/** @type {import('next').NextConfig} */
const nextConfig = {
  reactStrictMode: true,
  poweredByHeader: false,
  // Native and server-only modules stay outside the bundle.
  serverExternalPackages: ['better-sqlite3', 'busboy', 'kysely', 'pg'],
};

export default nextConfig;
