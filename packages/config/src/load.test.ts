import { Type } from '@sinclair/typebox';
import { describe, expect, it } from '@jest/globals';
import { fields } from './fields.js';
import { ConfigError, loadConfig, loadConfigOrExit, type ConfigBootIo } from './load.js';

const schema = Type.Object({
  PORT: fields.port(8080),
  DATABASE_URL: fields.postgresUrl(),
  SHUTDOWN_TIMEOUT_MS: fields.durationMs(10_000),
  INTERNAL_TOKEN: fields.secret(32),
});

describe('loadConfig', () => {
  it('coerces values, applies defaults and freezes the result', () => {
    const config = loadConfig('test', schema, {
      DATABASE_URL: 'postgres://u@127.0.0.1:5432/db',
      SHUTDOWN_TIMEOUT_MS: '2500',
      INTERNAL_TOKEN: 'x'.repeat(32),
    });
    expect(config).toEqual({
      PORT: 8080,
      DATABASE_URL: 'postgres://u@127.0.0.1:5432/db',
      SHUTDOWN_TIMEOUT_MS: 2500,
      INTERNAL_TOKEN: 'x'.repeat(32),
    });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('reports a missing and an invalid variable in one error, without echoing values', () => {
    let caught: unknown;
    try {
      loadConfig('test', schema, {
        PORT: 'eighty',
        DATABASE_URL: 'postgres://h/db',
        INTERNAL_TOKEN: 'short-secret',
      });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    const problems = (caught as ConfigError).problems;
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^PORT: must be integer/),
        expect.stringMatching(/^INTERNAL_TOKEN: /),
      ]),
    );
    expect(problems).toHaveLength(2);
    expect((caught as ConfigError).message).not.toContain('short-secret');
  });

  it('accepts keyrings in both formats and rejects a malformed one without echoing it', () => {
    const keyed = Type.Object({ MASTER_KEY: fields.keyring('test key') });
    const k1 = Buffer.alloc(32, 1).toString('base64');
    const k2 = Buffer.alloc(32, 2).toString('base64');
    expect(loadConfig('test', keyed, { MASTER_KEY: k1 }).MASTER_KEY).toBe(k1);
    expect(loadConfig('test', keyed, { MASTER_KEY: `v2:${k2},v1:${k1}` }).MASTER_KEY).toContain(k2);
    for (const bad of [`v1:${k1},v2:${k2}`, `v2:${k2},${k1}`, k1.slice(1), `v2:${k2},v2:${k1}`]) {
      let caught: unknown;
      try {
        loadConfig('test', keyed, { MASTER_KEY: bad });
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(ConfigError);
      expect((caught as ConfigError).problems).toEqual(['MASTER_KEY: must match format "keyring"']);
      expect((caught as ConfigError).message).not.toContain(k1.slice(2, 20));
      expect((caught as ConfigError).message).not.toContain(k2.slice(2, 20));
    }
  });

  it('accepts address lists (addresses, CIDR ranges, proxy names) and rejects anything else', () => {
    const listed = Type.Object({ TRUSTED_PROXIES: fields.addressList('test proxies') });
    expect(loadConfig('test', listed, {}).TRUSTED_PROXIES).toBe('');
    for (const good of [
      '10.0.0.0/8',
      '127.0.0.1, 10.1.2.3',
      'loopback,uniquelocal,fd00::/8',
      '2001:db8::1',
      '0.0.0.0/0',
    ]) {
      expect(loadConfig('test', listed, { TRUSTED_PROXIES: good }).TRUSTED_PROXIES).toBe(good);
    }
    for (const bad of [
      '10.0.0.0/33',
      'ingress-nginx',
      '10.0.0/8',
      '::1/129',
      '10.0.0.1/8/8',
      ',',
    ]) {
      expect(() => loadConfig('test', listed, { TRUSTED_PROXIES: bad })).toThrow(
        /TRUSTED_PROXIES: must match format "address-list"/,
      );
    }
  });

  it('lists every missing required variable', () => {
    expect(() => loadConfig('test', schema, {})).toThrow(
      /DATABASE_URL: is required[\s\S]*INTERNAL_TOKEN: is required/,
    );
  });

  it('treats empty strings as unset', () => {
    expect(() =>
      loadConfig('test', schema, { DATABASE_URL: '', INTERNAL_TOKEN: 'x'.repeat(32) }),
    ).toThrow(/DATABASE_URL: is required/);
  });
});

describe('loadConfigOrExit', () => {
  function io(argv: string[], env: NodeJS.ProcessEnv) {
    const out: string[] = [];
    const err: string[] = [];
    const value: ConfigBootIo = {
      argv,
      env,
      stdout: (l) => out.push(l),
      stderr: (l) => err.push(l),
      exit: (code) => {
        throw new Error(`exit ${code}`);
      },
    };
    return { value, out, err };
  }
  const validEnv = { DATABASE_URL: 'postgres://h/db', INTERNAL_TOKEN: 'y'.repeat(40) };

  it('--check-config exits 0 on a valid configuration', () => {
    const { value, out } = io(['node', 'main.js', '--check-config'], validEnv);
    expect(() => loadConfigOrExit('svc', schema, value)).toThrow('exit 0');
    expect(out).toEqual(['configuration of svc is valid']);
  });

  it('exits 1 listing the problems on an invalid configuration', () => {
    const { value, err } = io(['node', 'main.js', '--check-config'], {});
    expect(() => loadConfigOrExit('svc', schema, value)).toThrow('exit 1');
    expect(err.join('\n')).toMatch(/DATABASE_URL: is required/);
  });

  it("lists a cross-check's problems beside the schema's, and passes when it finds none", () => {
    // A rule no schema states: a token only when the port is not the default.
    const tokenOffDefault = (values: Readonly<Record<string, unknown>>) =>
      values.PORT !== 8080 && values.INTERNAL_TOKEN === 'y'.repeat(40)
        ? ['INTERNAL_TOKEN: must change with PORT']
        : [];
    const bad = io(['node', 'main.js', '--check-config'], { ...validEnv, PORT: '9', x: '' });
    expect(() => loadConfigOrExit('svc', schema, bad.value, tokenOffDefault)).toThrow('exit 1');
    expect(bad.err.join('\n')).toContain('INTERNAL_TOKEN: must change with PORT');
    const alsoSchema = io(['node', 'main.js'], { PORT: '9', INTERNAL_TOKEN: 'y'.repeat(40) });
    expect(() => loadConfigOrExit('svc', schema, alsoSchema.value, tokenOffDefault)).toThrow(
      'exit 1',
    );
    expect(alsoSchema.err.join('\n')).toMatch(/DATABASE_URL: is required[\s\S]*PORT/);
    const good = io(['node', 'main.js', '--check-config'], validEnv);
    expect(() => loadConfigOrExit('svc', schema, good.value, tokenOffDefault)).toThrow('exit 0');
  });

  it('returns the config when started normally', () => {
    const { value } = io(['node', 'main.js'], validEnv);
    expect(loadConfigOrExit('svc', schema, value).PORT).toBe(8080);
  });
});
