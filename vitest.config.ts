import { defineConfig, type ViteUserConfig } from 'vitest/config';
import { postgresReachable, POSTGRES_ADMIN_URL } from './tests/helpers/postgres';

// The API suite runs three times: on SQLite, on PostgreSQL (the dialect switch), and through a
// proxy-mode instance in front of an embedded upstream. PostgreSQL is skipped, loudly, only where
// no server is reachable.
export default defineConfig(async (): Promise<ViteUserConfig> => {
  const postgresProblem = await postgresReachable();
  if (postgresProblem) {
    console.warn(`\n[parley] PostgreSQL suite SKIPPED: no server reachable at ${POSTGRES_ADMIN_URL} (${postgresProblem}).\n`);
  }
  return {
    test: {
      testTimeout: 60_000,
      hookTimeout: 60_000,
      pool: 'forks' as const,
      projects: [
        { extends: true as const, test: { name: 'sqlite', include: ['tests/api/**/*.test.ts', 'tests/proxy/**/*.test.ts', 'tests/sync/**/*.test.ts', 'tests/unit/**/*.test.ts'] } },
        ...(postgresProblem
          ? []
          : [{ extends: true as const, test: { name: 'postgres', include: ['tests/api/**/*.test.ts'], env: { PARLEY_TEST_POSTGRES: '1' } } }]),
        { extends: true as const, test: { name: 'via-proxy', include: ['tests/api/**/*.test.ts'], env: { PARLEY_TEST_VIA_PROXY: '1' } } },
      ],
    },
  };
});
