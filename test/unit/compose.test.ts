import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { agentEnvSpecs, loadAgentConfig } from '../../src/agent/config.js';
import { loadServiceConfig, serviceEnvSpecs } from '../../src/service/config.js';
import { loadCompose, parseCompose } from '../support/compose-file.js';
import { finalStage, parseDockerfile } from '../support/dockerfile.js';

// compose.yaml is read as Docker Compose reads it (test/support/compose-file.ts:
// merge keys, `${VAR:-default}` interpolated with nothing set, as a first
// `docker compose up` does) and checked against the Compose Specification's JSON schema, as
// the dclint package ships it (compose-spec/compose-spec's schema/compose-spec.json).

const ROOT = resolve(import.meta.dirname, '../..');
const SCHEMA = JSON.parse(readFileSync(resolve(ROOT, 'node_modules/dclint/schemas/compose.schema.json'), 'utf8')) as Record<string, unknown>;
const DRAFT_07 = JSON.parse(readFileSync(createRequire(import.meta.url).resolve('ajv/dist/refs/json-schema-draft-07.json'), 'utf8')) as Record<string, unknown>;

function load(env: Record<string, string> = {}): Record<string, any> {
  expect(parseCompose().problems).toEqual([]);
  return loadCompose(env);
}

const compose = load();
const services = compose.services as Record<string, Record<string, any>>;
const environmentOf = (name: string) => services[name]!.environment as Record<string, string>;
const dockerfileOf = (name: string) => {
  const build = services[name]!.build as { context: string; dockerfile: string };
  return finalStage(parseDockerfile(readFileSync(resolve(ROOT, build.context, build.dockerfile), 'utf8')));
};

describe('compose.yaml', () => {
  it('is valid by the Compose Specification\'s schema', () => {
    expect(SCHEMA.title).toBe('Compose Specification');
    // The schema names draft-07 by its https address; Ajv has that meta-schema under the http one.
    const ajv = new Ajv({ allErrors: true, strict: false });
    ajv.addMetaSchema({ ...DRAFT_07, $id: String(SCHEMA.$schema) });
    const validate = ajv.compile(SCHEMA);
    for (const subject of [parseCompose().raw, compose]) {
      expect(validate(subject), JSON.stringify(validate.errors, null, 2)).toBe(true);
    }
    // And the schema does turn away what Compose would.
    expect(validate({ services: { service: { image: 'x', depends_on: { postgres: { condition: 'service_ready' } } } } })).toBe(false);
    expect(validate({ services: { service: { image: 'x', healthcheck: { test: ['CMD', 'true'], intervall: '5s' } } } })).toBe(false);
  });

  it('runs PostgreSQL, the service and an agent, each built from this repository or a published image', () => {
    expect(Object.keys(services).sort()).toEqual(['agent', 'postgres', 'service']);
    expect(services.postgres!.image).toMatch(/^postgres:\d+/);
    for (const name of ['service', 'agent']) {
      const build = services[name]!.build as { context: string; dockerfile: string };
      expect(existsSync(resolve(ROOT, build.context, build.dockerfile)), `${name}: ${build.dockerfile}`).toBe(true);
    }
    expect(JSON.parse(dockerfileOf('service').find((instruction) => instruction.keyword === 'CMD')!.args)).toEqual(['service']);
    expect(JSON.parse(dockerfileOf('agent').find((instruction) => instruction.keyword === 'CMD')!.args)).toEqual(['agent']);
  });

  it('sets only variables the programs read, which their configuration parsers accept', () => {
    expect(Object.keys(environmentOf('service')).filter((name) => !(name in serviceEnvSpecs))).toEqual([]);
    expect(Object.keys(environmentOf('agent')).filter((name) => !(name in agentEnvSpecs))).toEqual([]);
    expect(Object.keys(environmentOf('postgres')).sort()).toEqual(['POSTGRES_DB', 'POSTGRES_PASSWORD', 'POSTGRES_USER']);
    expect(() => loadServiceConfig(environmentOf('service'))).not.toThrow();
    expect(() => loadAgentConfig(environmentOf('agent'))).not.toThrow();
  });

  it('pairs them: the service reaches the database, the agent the service with the key the service makes', () => {
    const postgres = environmentOf('postgres');
    const service = loadServiceConfig(environmentOf('service'));
    const database = new URL(service.databaseUrl!);
    expect([database.hostname, database.port, decodeURIComponent(database.username), decodeURIComponent(database.password), database.pathname]).toEqual([
      'postgres', '5432', postgres.POSTGRES_USER, postgres.POSTGRES_PASSWORD, `/${postgres.POSTGRES_DB}`,
    ]);
    expect(service.bootstrap).toBeDefined();
    const agent = loadAgentConfig(environmentOf('agent'));
    expect(agent.apiUrl).toBe(`http://service:${service.port}`);
    expect(agent.apiKey.reveal()).toBe(service.bootstrapLocation!.key.reveal());
    // One .env file changes both sides of each pair.
    const custom = load({ OUTPOST_LOCATION_KEY: `pl_${'c'.repeat(40)}`, POSTGRES_PASSWORD: 'p4ss' });
    expect(custom.services.agent.environment.API_KEY).toBe(custom.services.service.environment.BOOTSTRAP_PRIVATE_LOCATION_KEY);
    expect(custom.services.agent.environment.API_KEY).toBe(`pl_${'c'.repeat(40)}`);
    expect(custom.services.service.environment.DATABASE_URL).toContain(':p4ss@');
    expect(custom.services.postgres.environment.POSTGRES_PASSWORD).toBe('p4ss');
  });

  it('starts each after what it needs is healthy, and checks each one\'s health', () => {
    expect(services.service!.depends_on).toEqual({ postgres: { condition: 'service_healthy' } });
    expect(services.agent!.depends_on).toEqual({ service: { condition: 'service_healthy' } });
    expect(services.postgres!.healthcheck.test).toEqual(expect.arrayContaining(['pg_isready']));
    const service = loadServiceConfig(environmentOf('service'));
    const agent = loadAgentConfig(environmentOf('agent'));
    expect(services.service!.healthcheck.test.join(' ')).toContain(`http://127.0.0.1:${service.port}/-/readiness`);
    expect(services.agent!.healthcheck.test.join(' ')).toContain(`http://127.0.0.1:${agent.healthPort}/-/readiness`);
  });

  it('publishes the service on this machine only, at its port, and keeps data and artifacts in volumes', () => {
    const service = loadServiceConfig(environmentOf('service'));
    expect(services.service!.ports).toEqual([`127.0.0.1:3000:${service.port}`]);
    expect(new URL(service.publicUrl!).port).toBe('3000');
    expect(services.agent!.ports).toBeUndefined();
    expect(services.postgres!.ports).toBeUndefined();
    const [artifacts] = (services.service!.volumes as string[]).map((volume) => volume.split(':'));
    expect(artifacts).toEqual(['artifacts', service.artifactsDir ?? '/var/lib/outpost/artifacts']);
    const env = dockerfileOf('service').filter((instruction) => instruction.keyword === 'ENV').map((instruction) => instruction.args).join(' ');
    expect(env).toContain(`ARTIFACTS_DIR=${artifacts![1]}`);
    expect(Object.keys(compose.volumes as object).sort()).toEqual(['artifacts', 'postgres-data']);
  });

  it('gives the full agent what script isolation needs, with a profile the repository has', () => {
    const options = services.agent!.security_opt as string[];
    const profile = options.find((option) => option.startsWith('seccomp='))!.slice('seccomp='.length);
    expect(existsSync(resolve(ROOT, profile))).toBe(true);
    expect(options).toEqual(expect.arrayContaining(['apparmor=unconfined', 'systempaths=unconfined']));
    expect(services.agent!.cap_add).toEqual(['NET_RAW']);
  });
});
