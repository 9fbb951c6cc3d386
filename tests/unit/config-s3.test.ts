// S3_* settings: off unless S3_BUCKET is set, one clear message per mistake.
import { describe, expect, it } from 'vitest';
import { ConfigError, readConfig } from '../../lib/config';

const read = (env: Record<string, string>) => readConfig({ DATA_DIR: '/tmp/parley-config-test', ...env }).s3;

describe('object store configuration', () => {
  it('is off without S3_BUCKET (local disk)', () => {
    expect(read({})).toBeNull();
  });

  it('reads a MinIO-style setup; a custom endpoint defaults the region to us-east-1', () => {
    expect(
      read({
        S3_BUCKET: 'parley-files',
        S3_ENDPOINT: 'http://minio.internal:9000/',
        S3_ACCESS_KEY_ID: 'key',
        S3_SECRET_ACCESS_KEY: 'secret',
        S3_FORCE_PATH_STYLE: 'true',
      }),
    ).toEqual({
      bucket: 'parley-files',
      endpoint: 'http://minio.internal:9000',
      region: 'us-east-1',
      credentials: { accessKeyId: 'key', secretAccessKey: 'secret' },
      forcePathStyle: true,
      presignedRedirect: false,
    });
  });

  it('on AWS, region and credentials may come from the SDK\'s usual sources', () => {
    expect(read({ S3_BUCKET: 'my.bucket-1', S3_PRESIGNED_REDIRECT: 'true' })).toEqual({
      bucket: 'my.bucket-1',
      endpoint: null,
      region: null,
      credentials: null,
      forcePathStyle: false,
      presignedRedirect: true,
    });
    expect(read({ S3_BUCKET: 'r2-bucket', S3_REGION: 'auto' })!.region).toBe('auto');
  });

  it.each([
    [{ S3_ENDPOINT: 'http://x:9000' }, 'S3_ENDPOINT is set but S3_BUCKET is not'],
    [{ S3_REGION: 'eu-west-1', S3_FORCE_PATH_STYLE: 'true' }, 'S3_REGION, S3_FORCE_PATH_STYLE are set but S3_BUCKET is not'],
    [{ S3_BUCKET: 'ab' }, 'S3_BUCKET must be 3-63 lower-case letters'],
    [{ S3_BUCKET: 'My_Bucket' }, 'S3_BUCKET must be 3-63 lower-case letters'],
    [{ S3_BUCKET: 'a'.repeat(64) }, 'S3_BUCKET must be 3-63 lower-case letters'],
    [{ S3_BUCKET: 'two..dots' }, 'S3_BUCKET must be 3-63 lower-case letters'],
    [{ S3_BUCKET: 'ok-bucket', S3_ENDPOINT: 'not a url' }, 'S3_ENDPOINT must be an absolute http(s) URL'],
    [{ S3_BUCKET: 'ok-bucket', S3_ENDPOINT: 'ftp://minio' }, 'S3_ENDPOINT must be an http(s) URL'],
    [{ S3_BUCKET: 'ok-bucket', S3_REGION: 'EU West' }, 'S3_REGION must be a region name'],
    [{ S3_BUCKET: 'ok-bucket', S3_ACCESS_KEY_ID: 'key' }, 'S3_ACCESS_KEY_ID is set but S3_SECRET_ACCESS_KEY is not'],
    [{ S3_BUCKET: 'ok-bucket', S3_SECRET_ACCESS_KEY: 'secret' }, 'S3_SECRET_ACCESS_KEY is set but S3_ACCESS_KEY_ID is not'],
    [{ S3_BUCKET: 'ok-bucket', S3_FORCE_PATH_STYLE: 'yes' }, 'S3_FORCE_PATH_STYLE must be "true" or "false", got "yes"'],
    [{ S3_BUCKET: 'ok-bucket', S3_PRESIGNED_REDIRECT: '1' }, 'S3_PRESIGNED_REDIRECT must be "true" or "false", got "1"'],
  ])('refuses %j', (env, message) => {
    expect(() => read(env)).toThrow(ConfigError);
    expect(() => read(env)).toThrow(message);
  });

  it('never puts the secret in a message', () => {
    try {
      read({ S3_SECRET_ACCESS_KEY: 'top-secret-value' });
      expect.unreachable();
    } catch (error) {
      expect(String(error)).not.toContain('top-secret-value');
    }
  });
});
