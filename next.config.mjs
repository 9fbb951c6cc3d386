/** @type {import('next').NextConfig} */
const nextConfig = {
  reactStrictMode: true,
  poweredByHeader: false,
  turbopack: {
    resolveAlias: {
      // TanStack Table's store reads through React's useSyncExternalStore shim for React < 18; React 19
      // has the hook: the selector variant without the shim saves the shim's code on the first screen.
      'use-sync-external-store/shim/with-selector': 'use-sync-external-store/with-selector',
    },
  },
  // Native and server-only modules stay outside the bundle (Next keeps @aws-sdk/client-s3 out itself).
  serverExternalPackages: ['better-sqlite3', 'busboy', 'kysely', 'pg', '@aws-sdk/lib-storage', '@aws-sdk/s3-request-presigner'],
  async headers() {
    // A new service worker must be seen at once; it then waits for "reload to update".
    return [{ source: '/sw.js', headers: [{ key: 'Cache-Control', value: 'no-cache' }] }];
  },
};

export default nextConfig;
