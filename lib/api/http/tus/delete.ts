// DELETE /v1/uploads/{id} (termination): ends the upload; its stored bytes go (a finished upload's
// file stays).
import { notFound } from '../../errors';
import type { ApiResult } from '../../result';
import type { ApiRequest } from '../exchange';
import { TUS_HEADERS } from './protocol';
import type { TusUploads } from './uploads';

export async function terminate(tus: TusUploads, request: ApiRequest, user: string, id: string): Promise<ApiResult> {
  const result = await tus.deps.idempotency.run(
    user,
    request.header('idempotency-key'),
    () => ({ method: 'DELETE', path: `/v1/uploads/${id}`, content: {} }),
    async (trx) => {
      if (!(await tus.records.deleteOwned(trx, user, id))) throw notFound('upload');
      return { status: 204, headers: TUS_HEADERS };
    },
    { singleWrite: true, audit: request.audit },
  );
  // A PATCH of this process still receiving bytes for it: its body is ended here, and its chunk
  // can no longer be recorded (the row is gone), so it removes its blob. The answer waits for
  // that: after the 204 no byte of the upload is left in the store. (Not for a completion under
  // way: its chunks were recorded, so they went with the row and are drained below; a proxy's
  // delivery upstream may take long.)
  await tus.endWriter(id);
  await tus.drain();
  return result;
}
