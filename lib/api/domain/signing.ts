// Signed asset URLs: HMAC-SHA256 over (file id, filename) with a per-installation secret, so a URL
// is stable while the file keeps its name and stops working when it is renamed.
import { createHmac, timingSafeEqual } from 'node:crypto';

export class UrlSigner {
  constructor(private readonly secret: Buffer) {}

  sign(fileId: string, filename: string): string {
    return createHmac('sha256', this.secret).update(`${fileId}\n${filename}`).digest('base64url');
  }

  verify(fileId: string, filename: string, signature: string): boolean {
    const expected = Buffer.from(this.sign(fileId, filename));
    const given = Buffer.from(signature);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  fileUrl(assetBase: string, fileId: string, filename: string): string {
    return `${assetBase}/files/${encodeURIComponent(filename)}?id=${fileId}&sig=${this.sign(fileId, filename)}`;
  }
}
