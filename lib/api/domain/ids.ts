// The helpers moved below storage and domain (lib/api/ids.ts: storage needs them and may not
// import domain/); re-exported here for the domain's imports.
export { newId, nowSeconds } from '../ids';
