// Thin adapter: Next.js route handler → the framework-free core's POST /device-policy/clear (embedded or proxy).
import { handleRequest } from '@/lib/route-handlers';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

export { handleRequest as POST };
