// The little of oidc-provider 8 (a devDependency without types of its own) tests/api/oidc.test.ts uses.
declare module 'oidc-provider' {
  import type { RequestListener } from 'node:http';

  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    callback(): RequestListener;
  }
}
