// Extensions of Parley's own server (../shared/API.md, "Sign-in and devices"): the caller's
// devices (/v1/me/devices) and pairing another device (/v1/me/pairings, /v1/pairings). A server
// without them answers 404 like any unknown route; the app then offers neither.
import { z } from 'zod';
import { BooleanInput, Id, PairingRedeemInput, PairingTokenInput } from '../../schemas';
import { readFields } from '../http/body';
import { refuseQueryParameters } from '../domain/pagination';
import { listDevices, removeDevice } from '../domain/devices';
import { deviceLabel } from '../domain/pairings';
import { common, empty, error, notFound, ok, publicCommon, retryable, unsupportedMedia } from './responses';
import { fieldsBody, queryOf, type Route } from './route';

const fieldsMedia = 'application/json, application/x-www-form-urlencoded or multipart/form-data';
const device = { path: '/v1/me/devices/{id}', tag: 'Devices', extension: 'devices', params: z.strictObject({ id: Id }), missing: 'device' } as const;
const pairing = (suffix = '') => ({ path: `/v1/me/pairings/{id}${suffix}`, tag: 'Devices', extension: 'devices', params: z.strictObject({ id: Id }), missing: 'pairing' }) as const;
const noPairing = notFound('no such pairing (or not the caller\'s)');
const deleteQuery = queryOf(z.strictObject({ wipe: BooleanInput.optional() }));
const redeemBody = fieldsBody(PairingRedeemInput, 'PairingRedeem', true);
const collectBody = fieldsBody(PairingTokenInput, 'PairingCollect', true);
const expiredOrUsed = { '410': error('pairing_expired (the code or the request is older than 2 minutes) or pairing_used (a code works once)') };

export const deviceRoutes: Route[] = [
  {
    method: 'GET',
    path: '/v1/me/devices',
    tag: 'Devices',
    extension: 'devices',
    operationId: 'listDevices',
    summary: 'The caller\'s devices',
    description:
      'Extension: the stored tokens of the token\'s user — devices signed in by pairing (or sign-in) and CLI tokens — newest first; ' +
      '`current` marks the one making this request (a static PARLEY_TOKENS token is not listed). Wiped and expired ones are not listed. ' +
      'last_seen_at is accurate to within 5 minutes. One page: has_more is false for any real number of devices.',
    query: z.strictObject({}),
    responses: { '200': ok('The devices, newest first', 'DevicePage'), ...common },
    handle: async (api, { request, user, tokenId }) => {
      refuseQueryParameters(request.query);
      return { status: 200, body: await listDevices(api.db, user, tokenId, api.config.tokenTtlSeconds) };
    },
  },
  {
    ...device,
    method: 'DELETE',
    operationId: 'deleteDevice',
    summary: 'Sign a device out',
    description:
      'Extension: revokes the device\'s token (this device\'s own too). With wipe=true the token is kept, marked wiped: every request with it ' +
      'is then answered 401 device_wiped and the app there erases everything of the user it holds. Other instances may accept the token ' +
      'for up to 10 s more (their token cache). Another user\'s device: 404.',
    query: deleteQuery.schema,
    responses: { '204': empty('Signed out'), ...common, ...notFound('no such device (or not the caller\'s)') },
    handle: async (api, { request, user, params }) => {
      const { wipe } = deleteQuery.parse(request.query);
      await removeDevice(api.db, user, params.id, { wipe: wipe ?? false, ttlSeconds: api.config.tokenTtlSeconds, audit: request.audit });
      api.forgetToken(params.id);
      return { status: 204 };
    },
  },
  {
    method: 'POST',
    path: '/v1/me/pairings',
    tag: 'Devices',
    extension: 'devices',
    operationId: 'createPairing',
    summary: 'A code to add a device',
    description:
      'Extension: a one-use code (8 characters of 23456789ABCDEFGHJKMNPQRSTVWXYZ) valid for 2 minutes. Another device redeems it ' +
      '(POST /v1/pairings/redeem, or opens <origin>/?pair=<code>); this device then sees who asks (GET /v1/me/pairings/{id}) and ' +
      'approves or denies. At most 5 codes of a user wait at once (429 otherwise).',
    responses: { '201': ok('The code', 'PairingCreated'), ...common },
    handle: async (api, { request, user }) => {
      refuseQueryParameters(request.query);
      return { status: 201, body: await api.pairings.create(user) };
    },
  },
  {
    ...pairing(),
    method: 'GET',
    operationId: 'retrievePairing',
    summary: 'What became of a code',
    description:
      'Extension: waiting (not redeemed yet), redeemed (a device asks: label says which; approve or deny it), approved, denied, ' +
      'collected (the device has its token) or expired. The device that made the code polls this.',
    responses: { '200': ok('The pairing', 'Pairing'), ...common, ...noPairing },
    handle: async (api, { request, user, params }) => {
      refuseQueryParameters(request.query);
      return { status: 200, body: await api.pairings.get(user, params.id) };
    },
  },
  decision('/approve', 'approvePairing', 'Let the device in', 'Extension: the device that redeemed the code may now collect its own device token (within 2 minutes).', true),
  decision('/deny', 'denyPairing', 'Refuse the device', 'Extension: the device that redeemed the code is told pairing_denied (403) and gets no token.', false),
  {
    method: 'POST',
    path: '/v1/pairings/redeem',
    tag: 'Devices',
    extension: 'devices',
    access: 'public',
    rateLimit: 'pairing',
    operationId: 'redeemPairing',
    summary: 'Redeem a code (the new device)',
    description:
      'Extension, no token: the new device sends the code (case, spaces and dashes do not matter) and optionally its label (default: from ' +
      'its User-Agent, e.g. "Chrome on Android"). It gets a secret, never a token: it collects its token with the secret once the other ' +
      'device approves. Rate-limited per client address (RATE_LIMIT_PAIRING_PER_MINUTE, default 10).',
    body: redeemBody,
    responses: {
      '201': ok('Redeemed: wait for approval', 'PairingRedeemed'),
      '400': common['400'],
      ...notFound('no such code'),
      ...expiredOrUsed,
      '429': common['429'],
      ...publicCommon,
      ...unsupportedMedia(fieldsMedia),
    },
    handle: async (api, { request }) => {
      refuseQueryParameters(request.query);
      const fields = redeemBody.parse(await readFields(request));
      return { status: 201, body: await api.pairings.redeem({ code: fields.code, label: deviceLabel(request.header('user-agent'), fields.label) }) };
    },
  },
  {
    method: 'POST',
    path: '/v1/pairings/{id}/token',
    tag: 'Devices',
    extension: 'devices',
    access: 'public',
    rateLimit: 'address',
    params: z.strictObject({ id: Id }),
    missing: 'pairing',
    operationId: 'collectPairingToken',
    summary: 'Collect the new device\'s token',
    description:
      'Extension, no token: with the secret from the redemption, in the body (never in a URL). 200 with the device\'s own token once approved ' +
      '(once: a second collection is 410); 409 pairing_pending with Retry-After until then (poll); 403 pairing_denied; 410 expired. ' +
      'A wrong secret: 404.',
    body: collectBody,
    responses: {
      '200': ok('The device token', 'PairingToken'),
      '400': common['400'],
      '403': error('pairing_denied: the other device refused'),
      ...notFound('no such pairing, or not its secret'),
      '409': retryable('pairing_pending: not approved yet; ask again after Retry-After'),
      ...expiredOrUsed,
      '429': common['429'],
      ...publicCommon,
      ...unsupportedMedia(fieldsMedia),
    },
    handle: async (api, { request, params }) => {
      refuseQueryParameters(request.query);
      const fields = collectBody.parse(await readFields(request));
      return { status: 200, body: await api.pairings.collect(params.id, fields.secret) };
    },
  },
];

/** Approve or deny a redeemed code: the same route but for its word and its outcome. */
function decision(step: '/approve' | '/deny', operationId: string, summary: string, description: string, approve: boolean): Route {
  return {
    ...pairing(step),
    method: 'POST',
    operationId,
    summary,
    description,
    responses: {
      '200': ok(approve ? 'Approved' : 'Denied', 'Pairing'),
      ...common,
      ...noPairing,
      '409': retryable('pairing_pending: no device has redeemed the code yet'),
      ...expiredOrUsed,
    },
    handle: async (api, { request, user, params }) => {
      refuseQueryParameters(request.query);
      return { status: 200, body: await api.pairings.decide(user, params.id, approve) };
    },
  };
}
