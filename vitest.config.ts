import { defineConfig } from 'vitest/config';
import { postgresReachable, POSTGRES_ADMIN_URL } from './tests/helpers/postgres';

// The API suite runs on SQLite and on PostgreSQL (the dialect switch). PostgreSQL is skipped,
// loudly, only where no server is reachable.
export default defineConfig(async () => {
  const postgresProblem = await postgresReachable();
  if (postgresProblem) {
    console.warn(`\n[parley] PostgreSQL suite SKIPPED: no server reachable at ${POSTGRES_ADMIN_URL} (${postgresProblem}).\n`);
  }
  return {
    test: {
      testTimeout: 60_000,
      hookTimeout: 60_000,
      pool: 'forks',
      projects: [
        { extends: true, test: { name: 'sqlite', include: ['tests/api/**/*.test.ts', 'tests/unit/**/*.test.ts'] } },
        ...(postgresProblem
          ? []
          : [{ extends: true, test: { name: 'postgres', include: ['tests/api/**/*.test.ts'], env: { PARLEY_TEST_POSTGRES: '1' } } }]),
      ],
    },
  };
});
