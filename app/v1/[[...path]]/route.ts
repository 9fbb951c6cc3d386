// Thin adapter: Next.js route handler → the framework-free /v1 core (embedded or proxy).
import { getDispatch } from '@/lib/api/instance';
import { fromWebRequest, toWebResponse } from '@/lib/api/http';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

async function handle(request: Request): Promise<Response> {
  const dispatch = await getDispatch();
  return toWebResponse(await dispatch(fromWebRequest(request)));
}

export { handle as GET, handle as POST, handle as PUT, handle as DELETE, handle as PATCH, handle as HEAD, handle as OPTIONS };
