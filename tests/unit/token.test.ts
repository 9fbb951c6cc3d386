// @vitest-environment node
// `npm run token`: it says which database it works on, and without the server's data it says so
// instead of creating an empty database (where a listing would wrongly say "no stored tokens");
// only `create` with DATA_DIR given explicitly starts a new one.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCommand } from '../helpers/cli';
import { startTestServer, tempDataDir } from '../helpers/server';

/** Runs the token command the way `npm run token -- …` does (compiled, as the build does), in `cwd`, with exactly `env`. */
const token = (args: string[], cwd: string, env: Record<string, string> = {}) => runCommand('token', args, env, cwd);

const cleanup: string[] = [];
afterEach(() => {
  for (const dir of cleanup.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

describe('npm run token', () => {
  it('without the server\'s DATA_DIR: says there is no database and how to point at it, and creates nothing', async () => {
    const cwd = tempDataDir();
    cleanup.push(cwd);
    const commands = [['list'], ['create', '--user', 'alice'], ['revoke', 'abc']];
    const results = await Promise.all(commands.map((args) => token(args, cwd)));
    for (const [i, r] of results.entries()) {
      const args = commands[i]!;
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.out).toBe('');
      expect(r.err).toContain(`no database at ${path.join(cwd, 'data', 'parley.sqlite')}`);
      expect(r.err).toContain('DATA_DIR=');
      expect(r.err).toContain('DATABASE_URL');
      expect(r.err).not.toContain('no stored tokens');
    }
    expect(fs.readdirSync(cwd)).toEqual([]); // no ./data appeared
  });

  it('create with an explicit DATA_DIR and no database yet starts one there, and says so', async () => {
    const cwd = tempDataDir();
    const dataDir = path.join(tempDataDir(), 'data');
    cleanup.push(cwd, path.dirname(dataDir));
    const created = await token(['create', '--user', 'alice'], cwd, { DATA_DIR: dataDir });
    expect(created.code).toBe(0);
    expect(created.out).toMatch(/^pk_/);
    expect(created.err).toContain(`SQLite at ${path.join(dataDir, 'parley.sqlite')} — new: created now`);
    const listed = await token(['list'], cwd, { DATA_DIR: dataDir });
    expect(listed.out).toMatch(/ alice /);
    expect(fs.readdirSync(cwd)).toEqual([]);
  });

  it("with the server's DATA_DIR: names the database it read, and lists what is there", async () => {
    const server = await startTestServer();
    await server.stop(); // the server created its database; the command works on it offline
    cleanup.push(server.dataDir);
    const cwd = tempDataDir();
    cleanup.push(cwd);
    const env = { DATA_DIR: server.dataDir };
    const database = `SQLite at ${path.join(server.dataDir, 'parley.sqlite')}`;

    const empty = await token(['list'], cwd, env);
    expect(empty).toMatchObject({ code: 0, out: 'no stored tokens\n' });
    expect(empty.err).toContain(database);

    const created = await token(['create', '--user', 'alice', '--label', 'phone'], cwd, env);
    expect(created.code).toBe(0);
    expect(created.err).toContain(database);
    const listed = await token(['list'], cwd, env);
    expect(listed.code).toBe(0);
    expect(listed.out).toMatch(/^\S+ {2}alice {2}\S+ {2}phone\n$/);
    expect(fs.readdirSync(cwd)).toEqual([]);
  });

  it('names a PostgreSQL database without its password', async () => {
    const cwd = tempDataDir();
    cleanup.push(cwd);
    // Nothing listens on port 1: the command names the database, then fails to reach it.
    const r = await token(['list'], cwd, { DATABASE_URL: 'postgres://parley:secret@127.0.0.1:1/parley' });
    expect(r.code).toBe(1);
    expect(r.err).toContain('PostgreSQL at postgres://parley:***@127.0.0.1:1/parley');
    expect(r.err).not.toContain('secret');
    expect(fs.readdirSync(cwd)).toEqual([]);
  });

  it('refuses a label with control or invisible characters (a forged row, a terminal escape), storing nothing', async () => {
    const server = await startTestServer();
    await server.stop();
    cleanup.push(server.dataDir);
    const cwd = tempDataDir();
    cleanup.push(cwd);
    const env = { DATA_DIR: server.dataDir };
    const forged = 'phone\nFAKE01  mallory  2026-01-01T00:00:00.000Z  admin\u001b[2J';
    const labels = [forged, 'tab\there', 'right\u202eto-left', 'x'.repeat(201)];
    // Independent refusals: started together (each is a process start; one after another they
    // add up on a loaded machine).
    const results = await Promise.all(labels.map((label) => token(['create', '--user', 'alice', '--label', label], cwd, env)));
    for (const [i, refused] of results.entries()) {
      const label = labels[i]!;
      expect(refused.code, JSON.stringify(label)).toBe(2);
      expect(refused.out).toBe('');
      expect(refused.err).toContain('refused');
    }
    const listed = await token(['list'], cwd, env);
    expect(listed.out).toBe('no stored tokens\n');
    // A plain label with spaces and non-ASCII letters is fine.
    expect((await token(['create', '--user', 'alice', '--label', "Zoë's ward phone"], cwd, env)).code).toBe(0);
    expect((await token(['list'], cwd, env)).out).toMatch(/ {2}Zoë's ward phone\n$/);
  });

  it('refuses a stray argument or an unknown option (exit 2, on stderr) instead of ignoring it, and does nothing', async () => {
    const server = await startTestServer();
    await server.stop();
    cleanup.push(server.dataDir);
    const cwd = tempDataDir();
    cleanup.push(cwd);
    const env = { DATA_DIR: server.dataDir };
    const created = await token(['create', '--user', 'alice'], cwd, env);
    expect(created.code).toBe(0);
    const id = (await token(['list'], cwd, env)).out.split(' ')[0]!;
    const cases: Array<[string[], RegExp]> = [
      [['create', '--user', 'bob', 'phone'], /unexpected argument "phone"/],
      [['create', 'bob', '--user', 'carol'], /unexpected argument "bob"/],
      [['create', '--user', 'bob', '--lable', 'phone'], /unknown option "--lable"/],
      [['list', 'alice'], /unexpected argument "alice"/],
      [['revoke', id, 'pk_second-token-that-is-long'], /unexpected argument "pk_sec…"/],
      [['revoke', id, '--wipe-all'], /unknown option "--wipe-all"/],
      [['revoke'], /token id or token is required/],
      [['create', '--user'], /--user needs a value/],
    ];
    // Independent refusals: started together, as above.
    const results = await Promise.all(cases.map(([args]) => token(args, cwd, env)));
    for (const [i, [args, message]] of cases.entries()) {
      const r = results[i]!;
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.out, args.join(' ')).toBe('');
      expect(r.err, args.join(' ')).toMatch(message);
      expect(r.err).not.toContain('pk_second-token-that-is-long');
    }
    // Nothing was created or revoked.
    const listed = await token(['list'], cwd, env);
    expect(listed.out.trim().split('\n')).toHaveLength(1);
    expect(listed.out).toContain(id);
  });

  it('revoke of a PARLEY_TOKENS token says it is static and how to remove it', async () => {
    const server = await startTestServer();
    await server.stop();
    cleanup.push(server.dataDir);
    const cwd = tempDataDir();
    cleanup.push(cwd);
    const r = await token(['revoke', 'alice-static-token-0123'], cwd, { DATA_DIR: server.dataDir, PARLEY_TOKENS: 'alice:alice-static-token-0123' });
    expect(r.code).toBe(1);
    expect(r.err).toContain('static token of user "alice"');
    expect(r.err).toContain('remove it from PARLEY_TOKENS and restart');
    expect(r.err).not.toContain('alice-static-token-0123'); // not echoed whole
    // Unknown to this CLI's environment: the answer still says where static tokens come from.
    const unknown = await token(['revoke', 'not-a-stored-token'], cwd, { DATA_DIR: server.dataDir });
    expect(unknown.code).toBe(1);
    expect(unknown.out).toContain('no such stored token');
    expect(unknown.err).toContain('PARLEY_TOKENS');
  });
});
