// Thin adapter: Next.js route handler → the asset host of the framework-free core (embedded or proxy).
import { handleRequest } from '@/lib/route-handlers';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

export { handleRequest as GET, handleRequest as POST, handleRequest as PUT, handleRequest as DELETE, handleRequest as PATCH, handleRequest as HEAD, handleRequest as OPTIONS };
