// Thin adapter: Next.js route handler → the framework-free core's single sign-on (/auth/oidc,
// /auth/oidc/start, /auth/oidc/callback, /auth/oidc/handoff; lib/api/http/oidc.ts).
import { handleRequest } from '@/lib/route-handlers';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

export { handleRequest as GET, handleRequest as HEAD, handleRequest as POST };
