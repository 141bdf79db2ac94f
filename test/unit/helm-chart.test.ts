import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Ajv } from 'ajv';
import addFormatsImport from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { agentEnvSpecs, loadAgentConfig } from '../../src/agent/config.js';
import { PRIVATE_LOCATION_KEY_PATTERN } from '../../src/protocol/agent-api.js';
import type { Queryable } from '../../src/service/db/database.js';
import { createServiceMetrics } from '../../src/service/service-metrics.js';
import { finalStage, parseDockerfile } from '../support/dockerfile.js';
import { loadChart, mergeValues, renderChart, TemplateFailure, valuesReferences, type Chart, type Rendered } from '../support/helm-template.js';
import { containerOf, envOf, objectsOf, podOf, single } from '../support/rendered-objects.js';
import { kubernetesSchemaErrors } from '../support/kubernetes-schemas.js';

// Helm cannot run here, so the chart is rendered by a small Go-template renderer
// (test/support/helm-template.ts) and the Kubernetes objects it makes are checked.

// ajv-formats ships CommonJS with a default export property.
const addFormats = addFormatsImport as unknown as (ajv: Ajv) => Ajv;

const ROOT = resolve(import.meta.dirname, '../..');
const CHART_DIR = resolve(ROOT, 'charts/outpost-agent');
const chart = loadChart(CHART_DIR);
const schema = JSON.parse(readFileSync(resolve(CHART_DIR, 'values.schema.json'), 'utf8')) as object;
const validateValues = addFormats(new Ajv({ allErrors: true, strict: true, allowUnionTypes: true })).compile(schema);

const KEY = `pl_${'k'.repeat(40)}`;
const REQUIRED = { apiUrl: 'https://monitoring.example.com', apiKeySecret: { apiKey: KEY } };
const RELEASE = { name: 'outpost', namespace: 'synthetics' };
const FULLNAME = 'outpost-outpost-agent';

/** Variables the agent reads besides agentEnvSpecs: its error reporting's, and HOME (npm's cache, set for a root agent). */
const OTHER_AGENT_VARIABLES = ['EXTERNAL_OBSERVABILITY', 'SENTRY_DSN', 'HOME'];
/** The queue metrics the agent exports for autoscaling, each with a `lane` label. */
const LOCATION_ID = '6f1c2a9e-3b7d-4c55-9e21-0a8b4f7d2c13';
const QUEUE_METRICS = ['outpost_jobs_in_flight', 'outpost_queue_depth', 'outpost_capacity', 'outpost_free_capacity'];

/** Value sets the tests render; the values checks below go through all of them. */
const SCENARIOS = {
  defaults: {},
  uptime: { image: { variant: 'uptime' } },
  existingSecret: { existingSecret: 'outpost-key', apiKeySecret: { apiKey: '' } },
  namedSecret: { apiKeySecret: { create: false, name: 'my-key', key: 'token', apiKey: '' } },
  redisUrl: { redis: { external: { url: 'redis://:secret@redis.example:6379/0' } } },
  redisSecret: { redis: { external: { existingSecret: 'redis-conn', existingSecretKey: 'url' } } },
  hpa: { autoscaling: { enabled: true, targetMemoryUtilizationPercentage: 70, behavior: { scaleDown: { stabilizationWindowSeconds: 600 } } } },
  keda: { serviceMonitor: { enabled: true }, keda: { enabled: true, serverAddress: 'http://prometheus.monitoring:9090' } },
  kedaUptime: { image: { variant: 'uptime' }, serviceMonitor: { enabled: true }, keda: { enabled: true, serverAddress: 'http://prometheus.monitoring:9090' } },
  kedaService: { keda: { enabled: true, serverAddress: 'http://prometheus.monitoring:9090', source: 'service', privateLocationId: LOCATION_ID, minReplicaCount: 0 } },
  kedaServiceUptime: { image: { variant: 'uptime' }, uptimeConcurrency: 250, keda: { enabled: true, serverAddress: 'http://prometheus.monitoring:9090', source: 'service', privateLocationId: LOCATION_ID } },
  kedaCustom: {
    keda: { enabled: true, serverAddress: 'http://prometheus.monitoring:9090', query: 'sum(outpost_free_capacity{lane="script"})', metricType: 'AverageValue', threshold: '1', minReplicaCount: 0, behavior: { scaleDown: { stabilizationWindowSeconds: 900 } }, authenticationRef: { name: 'prometheus-auth' } },
  },
  serviceMonitor: { serviceMonitor: { enabled: true, namespace: 'monitoring', labels: { release: 'prometheus' }, relabelings: [{ action: 'labeldrop', regex: 'pod_template_hash' }] } },
  metricsService: { metrics: { port: 9100, service: { enabled: true, annotations: { 'prometheus.io/scrape': 'true' } } } },
  pdb: { replicaCount: 3, podDisruptionBudget: { enabled: true } },
  pdbMinAvailable: { podDisruptionBudget: { enabled: true, minAvailable: '50%' } },
  cachePvc: { dependencyCache: { persistence: { enabled: true, storageClassName: 'fast', annotations: { team: 'synthetics' } } } },
  cacheExistingClaim: { dependencyCache: { persistence: { enabled: true, existingClaim: 'shared-cache' } } },
  cacheNoClass: { dependencyCache: { persistence: { enabled: true, storageClassName: '-' } } },
  noCache: { dependencyCache: { enabled: false } },
  everythingElse: {
    nameOverride: 'agent',
    image: { tag: '0.2.0', pullPolicy: 'Always' },
    imagePullSecrets: [{ name: 'regcred' }],
    jobConcurrency: 4,
    logLevel: 'DEBUG',
    externalObservability: false,
    sentryDsn: 'https://public@errors.example.com/1',
    env: [{ name: 'SERVICE_SECRET_DB_PASSWORD', valueFrom: { secretKeyRef: { name: 'db', key: 'password' } } }],
    envFrom: [{ secretRef: { name: 'proxy' } }],
    resources: { requests: { cpu: '2', memory: '8Gi' }, limits: { memory: '12Gi' } },
    storage: { tmp: { sizeLimit: '2Gi' }, sandboxes: { medium: 'Memory', sizeLimit: '4Gi' } },
    extraVolumes: [{ name: 'ca', configMap: { name: 'corporate-ca' } }],
    extraVolumeMounts: [{ name: 'ca', mountPath: '/etc/outpost-ca', readOnly: true }],
    serviceAccount: { create: false, name: 'agents', annotations: { a: 'b' } },
    podAnnotations: { 'example.com/owner': 'synthetics' },
    podLabels: { team: 'synthetics' },
    priorityClassName: 'high',
    nodeSelector: { 'kubernetes.io/arch': 'amd64' },
    tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'agents', effect: 'NoSchedule' }],
    affinity: { podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [] } },
    topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'ScheduleAnyway' }],
    terminationGracePeriodSeconds: 600,
    shutdownGraceSeconds: 570,
  },
  fullnameOverride: { fullnameOverride: 'agents' },
  users: { sandbox: { isolation: 'users' } },
  noIsolation: { sandbox: { isolation: 'none' } },
  unsafe: { sandbox: { isolation: 'none', allowUnsafeNoIsolation: true } },
  seccompLocalhost: {
    sandbox: { seccompProfile: { type: 'Localhost', localhostProfile: 'outpost-agent.json' }, appArmorProfile: { type: 'Localhost', localhostProfile: 'outpost-agent' } },
  },
  noAppArmor: { sandbox: { appArmorProfile: null } },
  uptimeUsers: { image: { variant: 'uptime' }, sandbox: { isolation: 'users' } },
  noNetRaw: { netRaw: false },
  usersNoNetRaw: { netRaw: false, sandbox: { isolation: 'users' } },
} satisfies Record<string, Record<string, unknown>>;

/** Renders the chart with the required values plus `overrides`, after checking them against the schema as Helm does. */
function render(overrides: Record<string, unknown> = {}, options: { schema?: boolean } = {}): Rendered {
  const merged = mergeValues(REQUIRED, overrides) as Record<string, unknown>;
  if (options.schema !== false) expect(schemaErrors(mergeValues(chart.values, merged)), 'values against values.schema.json').toEqual([]);
  return renderChart(chart, merged, RELEASE);
}

function schemaErrors(values: unknown): string[] {
  return validateValues(values) ? [] : (validateValues.errors ?? []).map((error) => `${error.instancePath} ${error.message}`);
}

/** The message a render fails with; fails the test when it does not fail in a template (`fail`/`required`). */
function failure(overrides: Record<string, unknown>, options: { schema?: boolean } = {}): string {
  try {
    render(overrides, options);
  } catch (error) {
    expect(error).toBeInstanceOf(TemplateFailure);
    return (error as Error).message;
  }
  throw new Error('rendered without failing');
}

const deploymentOf = (rendered: Rendered) => single(rendered, 'Deployment');

const envValue = (rendered: Rendered, name: string) => envOf(rendered).get(name)?.value as string | undefined;

/** Names the chart itself sets (not the user's `env`) that the agent does not read. */
function unknownEnvNames(rendered: Rendered, userNames: string[] = []): string[] {
  const known = new Set([...Object.keys(agentEnvSpecs), ...OTHER_AGENT_VARIABLES]);
  return [...envOf(rendered).keys()].filter((name) => !known.has(name) && !userNames.includes(name));
}

/** The agent's configuration as the pod's environment gives it, with the key the Secret would hold. */
function agentConfigOf(rendered: Rendered) {
  const env: Record<string, string> = { API_KEY: KEY };
  for (const [name, entry] of envOf(rendered)) if (typeof entry.value === 'string') env[name] = entry.value;
  return loadAgentConfig(env);
}

/** What the image's user calls home, per the Dockerfile: npm writes its cache and config there. */
function imageUser(dockerfile: string): { uid: number; home: string } {
  const runs = finalStage(parseDockerfile(readFileSync(resolve(ROOT, dockerfile), 'utf8')))
    .filter((instruction) => instruction.keyword === 'RUN')
    .map((instruction) => instruction.args)
    .join(' ');
  const useradd = /useradd\s+--uid\s+(\d+)\b.*?--home-dir\s+(\S+)/.exec(runs);
  expect(useradd, `${dockerfile}: useradd --uid … --home-dir …`).not.toBeNull();
  return { uid: Number(useradd![1]), home: useradd![2]! };
}

/**
 * Directories the agent writes to (from its sources): the OS temp dir (embedded
 * redis-server, scrubbed uploads), and for script jobs SANDBOX_DIR, ENGINES_DIR,
 * DEPENDENCY_CACHE and the user's home (npm's cache for engine installs).
 */
function writablePaths(rendered: Rendered): string[] {
  const env = envOf(rendered);
  const paths = [env.get('TMPDIR')?.value ?? '/tmp'];
  if (envValue(rendered, 'AGENT_MODE') !== 'uptime') {
    paths.push(env.get('HOME')?.value ?? imageUser('Dockerfile').home);
    const config = agentConfigOf(rendered);
    paths.push(config.sandbox.directory, config.sandbox.enginesDirectory);
    if (config.sandbox.dependencyCache !== undefined) paths.push(config.sandbox.dependencyCache);
  }
  return paths;
}

/** Writable paths no volume is mounted at (or above). */
function unmountedWritablePaths(rendered: Rendered): string[] {
  const pod = podOf(rendered);
  const volumes = new Map((pod.volumes as Record<string, any>[]).map((volume) => [volume.name as string, volume]));
  const mounts = (containerOf(rendered).volumeMounts as Record<string, any>[]).filter((mount) => volumes.has(mount.name) && !mount.readOnly);
  return writablePaths(rendered).filter((path) => !mounts.some((mount) => path === mount.mountPath || path.startsWith(`${mount.mountPath}/`)));
}

/** `.Values` paths written in templates that values.yaml does not have. */
function missingValuesPaths(subject: Chart): string[] {
  const missing: string[] = [];
  for (const [path, source] of subject.templates) {
    for (const reference of valuesReferences(source)) if (!hasPath(subject.values, reference)) missing.push(`${path}: .Values.${reference}`);
  }
  return missing;
}

function hasPath(values: unknown, path: string): boolean {
  let here = values;
  for (const key of path.split('.')) {
    if (typeof here !== 'object' || here === null || Array.isArray(here) || !Object.hasOwn(here, key)) return false;
    here = (here as Record<string, unknown>)[key];
  }
  return true;
}

const withTemplate = (path: string, edit: (source: string) => string): Chart => {
  const templates = new Map(chart.templates);
  const source = templates.get(path);
  expect(source, path).toBeDefined();
  const edited = edit(source!);
  expect(edited, 'the edit changed nothing').not.toBe(source);
  templates.set(path, edited);
  return { ...chart, templates };
};

describe('Chart.yaml', () => {
  it('describes an application chart whose appVersion is the agent\'s version', () => {
    const pkg = JSON.parse(readFileSync(resolve(ROOT, 'package.json'), 'utf8')) as { version: string };
    expect(chart.metadata).toMatchObject({ apiVersion: 'v2', name: 'outpost-agent', type: 'application', version: '0.1.0' });
    expect(chart.metadata.description).toEqual(expect.any(String));
    // appVersion quoted: an unquoted 0.1 would be a number.
    expect(chart.metadata.appVersion).toBe(pkg.version);
  });
});

describe('values.yaml', () => {
  it('has every value a template names', () => {
    expect(missingValuesPaths(chart)).toEqual([]);
  });

  it('has no top-level value that no template uses', () => {
    const used = new Set([...chart.templates.values()].flatMap((source) => valuesReferences(source).map((path) => path.split('.')[0])));
    expect(Object.keys(chart.values).filter((key) => !used.has(key))).toEqual([]);
  });

  it('has every value the templates read while rendering, including through with and variables', () => {
    const read = new Set<string>();
    for (const overrides of Object.values(SCENARIOS)) for (const path of render(overrides).valuesRead) read.add(path);
    expect([...read].filter((path) => !hasPath(chart.values, path))).toEqual([]);
    // Free-form maps and lists are handed to toYaml whole; every other leaf is read by some scenario.
    expect(read.size).toBeGreaterThan(100);
  });

  it('passes its own schema, as do the value sets the tests use', () => {
    expect(schemaErrors(chart.values)).toEqual([]);
    for (const [name, overrides] of Object.entries(SCENARIOS)) expect(schemaErrors(mergeValues(chart.values, mergeValues(REQUIRED, overrides))), name).toEqual([]);
  });

  it('has a schema that turns away wrong values before any template runs', () => {
    const rejected = (overrides: Record<string, unknown>) => schemaErrors(mergeValues(chart.values, overrides));
    expect(rejected({ jobConcurrency: 11 })).not.toEqual([]);
    expect(rejected({ uptimeConcurrency: '100' })).not.toEqual([]);
    expect(rejected({ image: { variant: 'browser' } })).not.toEqual([]);
    expect(rejected({ imageTag: '1.0' })).not.toEqual([]);
    expect(rejected({ apiUrl: 'monitoring.example.com' })).not.toEqual([]);
    expect(rejected({ apiKeySecret: { apiKey: 'pl_short' } })).not.toEqual([]);
    expect(rejected({ redis: { external: { url: 'http://redis:6379' } } })).not.toEqual([]);
    expect(rejected({ keda: { threshold: 0.8 } })).not.toEqual([]);
    expect(rejected({ logLevel: 'TRACE' })).not.toEqual([]);
    expect(rejected({ sandbox: { isolation: 'auto' } })).not.toEqual([]);
    expect(rejected({ sandbox: { allowUnsafeNoIsolation: 'true' } })).not.toEqual([]);
    expect(rejected({ sandbox: { seccompProfile: { type: 'RuntimeDefault' } } })).not.toEqual([]);
    expect(rejected({ sandbox: { seccompProfile: { type: 'Localhost' } } })).not.toEqual([]);
    expect(rejected({ sandbox: { seccompProfile: null } })).not.toEqual([]);
    expect(rejected({ sandbox: { appArmorProfile: { type: 'RuntimeDefault' } } })).not.toEqual([]);
    expect(rejected({ sandbox: { appArmorProfile: { type: 'Unconfined', localhostProfile: 'x' } } })).not.toEqual([]);
    expect(rejected({ netRaw: 'yes' })).not.toEqual([]);
    // Set by sandbox.isolation now, so a value of the old shape is turned away rather than ignored.
    expect(rejected({ securityContext: { runAsUser: 0 } })).not.toEqual([]);
    expect(rejected({ global: { imageRegistry: 'r.example' } })).toEqual([]);
  });

  it('checks the API key with the pattern the agent and the service use', () => {
    const pattern = (schema as any).properties.apiKeySecret.properties.apiKey.pattern as string;
    expect(pattern).toBe(`^(${PRIVATE_LOCATION_KEY_PATTERN.slice(1, -1)})?$`);
  });

  it('defaults to what the agent and its image default to', () => {
    expect(chart.values.metrics).toMatchObject({ port: agentEnvSpecs.AGENT_HEALTH_PORT.default });
    expect(chart.values.shutdownGraceSeconds).toBe(agentEnvSpecs.SHUTDOWN_GRACE_SECONDS.default);
    expect(chart.values.jobConcurrency).toBe(agentEnvSpecs.JOB_CONCURRENCY.default);
    expect(chart.values.uptimeConcurrency).toBe(agentEnvSpecs.UPTIME_CONCURRENCY.default);
    expect(chart.values.logLevel).toBe(agentEnvSpecs.LOG_LEVEL.default);
    // Not the agent's default (auto, whatever the machine allows): the chart sets the pod up for one mode, so it names it.
    expect(agentEnvSpecs.SANDBOX_ISOLATION.choices).toContain((chart.values.sandbox as { isolation: string }).isolation);
    expect(chart.values.sandbox).toMatchObject({ isolation: 'namespaces', allowUnsafeNoIsolation: agentEnvSpecs.SANDBOX_ALLOW_UNSAFE_NO_ISOLATION.default });
    const expose = finalStage(parseDockerfile(readFileSync(resolve(ROOT, 'Dockerfile'), 'utf8'))).find((instruction) => instruction.keyword === 'EXPOSE');
    expect(expose?.args).toBe(String(agentEnvSpecs.AGENT_HEALTH_PORT.default));
  });
});

describe('with the default values', () => {
  const rendered = render();
  const deployment = deploymentOf(rendered);
  const pod = podOf(rendered);
  const agent = containerOf(rendered);

  it('makes a Deployment, the key\'s Secret and a ServiceAccount, nothing else', () => {
    const kinds = rendered.manifests.map(({ object }) => `${object.apiVersion as string} ${object.kind as string}`).sort();
    expect(kinds).toEqual(['apps/v1 Deployment', 'v1 Secret', 'v1 ServiceAccount']);
    for (const { object } of rendered.manifests) {
      expect(object.metadata.name).toBe(FULLNAME);
      expect(object.metadata.labels).toMatchObject({
        'app.kubernetes.io/name': 'outpost-agent',
        'app.kubernetes.io/instance': RELEASE.name,
        'app.kubernetes.io/version': '0.1.0',
        'app.kubernetes.io/managed-by': 'Helm',
        'helm.sh/chart': 'outpost-agent-0.1.0',
      });
    }
  });

  it('runs one agent, replaced one surge pod at a time, with 300 s to drain', () => {
    expect(deployment.spec.replicas).toBe(1);
    expect(deployment.spec.strategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxSurge: '10%', maxUnavailable: 0 } });
    expect(pod.terminationGracePeriodSeconds).toBe(300);
    expect(envValue(rendered, 'SHUTDOWN_GRACE_SECONDS')).toBe('280');
    expect(deployment.spec.template.metadata.labels).toMatchObject(deployment.spec.selector.matchLabels);
  });

  it('runs the full image of the chart\'s appVersion', () => {
    expect(agent.image).toBe('outpost-agent:0.1.0');
    expect(agent.imagePullPolicy).toBe('IfNotPresent');
    expect(envValue(rendered, 'AGENT_MODE')).toBe('full');
  });

  it('probes liveness and readiness on the agent\'s health port', () => {
    const port = (agent.ports as Record<string, any>[]).find((candidate) => candidate.name === agent.livenessProbe.httpGet.port);
    expect(port?.containerPort).toBe(8081);
    expect(envValue(rendered, 'AGENT_HEALTH_PORT')).toBe('8081');
    expect(agent.livenessProbe.httpGet).toEqual({ path: '/-/liveness', port: 'health' });
    expect(agent.readinessProbe.httpGet).toEqual({ path: '/-/readiness', port: 'health' });
  });

  it('sets only variables the agent reads, with values it accepts', () => {
    expect(unknownEnvNames(rendered)).toEqual([]);
    const config = agentConfigOf(rendered);
    expect(config).toMatchObject({ apiUrl: 'https://monitoring.example.com', mode: 'full', healthPort: 8081, shutdownGraceMs: 280_000, jobConcurrency: 1, redisUrl: undefined });
    // Error reporting stays at the agent's default unless switched off.
    expect(envOf(rendered).has('EXTERNAL_OBSERVABILITY')).toBe(false);
  });

  it('takes API_KEY from the Secret it makes, which holds the key', () => {
    const secret = single(rendered, 'Secret');
    expect(envOf(rendered).get('API_KEY')).toEqual({ name: 'API_KEY', valueFrom: { secretKeyRef: { name: secret.metadata.name, key: 'api-key' } } });
    expect(secret.type).toBe('Opaque');
    expect(Buffer.from(secret.data['api-key'], 'base64').toString()).toBe(KEY);
    expect(JSON.stringify(deployment)).not.toContain(KEY);
  });

  it('rolls the pods when the key changes, and only then', () => {
    const checksum = (apiKey: string) => deploymentOf(render({ apiKeySecret: { apiKey } })).spec.template.metadata.annotations['checksum/secrets'] as string;
    expect(checksum(KEY)).toMatch(/^[0-9a-f]{64}$/);
    expect(checksum(KEY)).toBe(checksum(KEY));
    expect(checksum(`${KEY}x`)).not.toBe(checksum(KEY));
  });

  it('runs as the image\'s non-root user, with a read-only root and no privileges beyond NET_RAW', () => {
    const { uid } = imageUser('Dockerfile');
    expect(pod.securityContext).toMatchObject({ fsGroup: uid });
    expect(agent.securityContext).toMatchObject({
      runAsNonRoot: true,
      runAsUser: uid,
      runAsGroup: uid,
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      privileged: false,
    });
    expect(agent.securityContext.capabilities).toEqual({ drop: ['ALL'], add: ['NET_RAW'] });
  });

  it('isolates script jobs in namespaces: a user namespace of the pod\'s own, an unmasked /proc, profiles that let bubblewrap work', () => {
    expect(envValue(rendered, 'SANDBOX_ISOLATION')).toBe('namespaces');
    expect(agentConfigOf(rendered).sandbox).toMatchObject({ isolation: 'namespaces', allowUnsafeNoIsolation: false });
    expect(envOf(rendered).has('SANDBOX_ALLOW_UNSAFE_NO_ISOLATION')).toBe(false);
    expect(pod.hostUsers).toBe(false);
    expect(agent.securityContext).toMatchObject({ procMount: 'Unmasked', seccompProfile: { type: 'Unconfined' }, appArmorProfile: { type: 'Unconfined' } });
    // Set on the container alone, so nothing at the pod's level contradicts it.
    for (const key of ['seccompProfile', 'appArmorProfile', 'runAsUser', 'runAsNonRoot']) expect(pod.securityContext, key).not.toHaveProperty(key);
  });

  it('lets the non-root agent\'s ping open ICMP sockets', () => {
    // Without privilege escalation ping does not get its file capability, so it needs unprivileged ICMP sockets for its group.
    const { uid } = imageUser('Dockerfile');
    const sysctl = (pod.securityContext.sysctls as { name: string; value: string }[]).find((entry) => entry.name === 'net.ipv4.ping_group_range');
    const [low, high] = sysctl!.value.split(' ').map(Number);
    expect(low! <= uid && uid <= high!).toBe(true);
    // In a user namespace the pod has ids 0-65535 only, and a bound beyond them makes the runtime fail the pod's start.
    expect(high).toBeLessThanOrEqual(65535);
  });

  it('mounts a volume wherever the agent writes, and nothing else is writable', () => {
    expect(unmountedWritablePaths(rendered)).toEqual([]);
    const volumes = new Map((pod.volumes as Record<string, any>[]).map((volume) => [volume.name as string, volume]));
    const mounts = agent.volumeMounts as Record<string, any>[];
    expect(mounts.map((mount) => mount.mountPath)).toEqual(['/tmp', '/home/outpost', '/var/lib/outpost/sandboxes', '/var/lib/outpost/engines', '/var/lib/outpost/dependency-cache']);
    for (const mount of mounts) expect(volumes.get(mount.name)?.emptyDir, mount.name).toEqual({});
    expect(volumes.size).toBe(mounts.length);
  });

  it('gives the agent directories inside its volumes, which it can own, rather than the volumes\' own, which are root\'s', () => {
    // The agent sets the modes of SANDBOX_DIR, ENGINES_DIR and DEPENDENCY_CACHE, which only their owner may.
    const { sandbox } = agentConfigOf(rendered);
    const mounts = (agent.volumeMounts as Record<string, any>[]).map((mount) => mount.mountPath as string);
    for (const path of [sandbox.directory, sandbox.enginesDirectory, sandbox.dependencyCache!]) {
      expect(mounts, path).not.toContain(path);
      expect(mounts, path).toContain(path.slice(0, path.lastIndexOf('/')));
    }
    expect(pod).not.toHaveProperty('initContainers');
  });

  it('mounts no service account token, on the pod or its ServiceAccount', () => {
    expect(pod.automountServiceAccountToken).toBe(false);
    const account = single(rendered, 'ServiceAccount');
    expect(account.automountServiceAccountToken).toBe(false);
    expect(pod.serviceAccountName).toBe(account.metadata.name);
  });

  it('asks for the full variant\'s memory and sets no CPU limit', () => {
    expect(agent.resources).toEqual({ requests: { cpu: '1', memory: '2Gi' }, limits: { memory: '3Gi' } });
  });

  it('says in its notes how to see the agents connect', () => {
    expect(rendered.notes).toContain(`rollout status deployment/${FULLNAME}`);
    expect(rendered.notes).toContain('/health');
    expect(rendered.notes).not.toContain(KEY);
  });
});

describe('the uptime variant', () => {
  const rendered = render(SCENARIOS.uptime);

  it('runs the uptime image in uptime mode', () => {
    expect(containerOf(rendered).image).toBe('outpost-agent:0.1.0-uptime');
    expect(envValue(rendered, 'AGENT_MODE')).toBe('uptime');
    expect(agentConfigOf(rendered).mode).toBe('uptime');
    expect(unknownEnvNames(rendered)).toEqual([]);
  });

  it('has no sandbox directories, only the temp dir, on its read-only root', () => {
    const env = envOf(rendered);
    for (const name of ['SANDBOX_DIR', 'ENGINES_DIR', 'DEPENDENCY_CACHE']) expect(env.has(name), name).toBe(false);
    expect(containerOf(rendered).volumeMounts).toEqual([{ name: 'tmp', mountPath: '/tmp' }]);
    expect(unmountedWritablePaths(rendered)).toEqual([]);
    expect(containerOf(rendered).securityContext.readOnlyRootFilesystem).toBe(true);
    // The uptime image has the same user and home as the full one.
    expect(imageUser('Dockerfile.uptime')).toEqual(imageUser('Dockerfile'));
  });

  it('asks for the uptime variant\'s smaller resources', () => {
    expect(containerOf(rendered).resources).toEqual({ requests: { cpu: '250m', memory: '256Mi' }, limits: { memory: '512Mi' } });
  });

  it('takes its own repository and tag when given', () => {
    const tagged = render({ image: { variant: 'uptime', uptime: { repository: 'registry.example/outpost-uptime', tag: 'edge' } } });
    expect(containerOf(tagged).image).toBe('registry.example/outpost-uptime:edge');
  });

  it('runs no scripts, so isolates nothing, whatever sandbox.isolation says', () => {
    for (const scenario of [SCENARIOS.uptime, SCENARIOS.uptimeUsers, { image: { variant: 'uptime' }, ...SCENARIOS.unsafe }]) {
      const plain = render(scenario);
      expect(envValue(plain, 'SANDBOX_ISOLATION')).toBe('none');
      expect(envOf(plain).has('SANDBOX_ALLOW_UNSAFE_NO_ISOLATION')).toBe(false);
      expect(agentConfigOf(plain).sandbox.isolation).toBe('none');
      expect(podOf(plain)).not.toHaveProperty('hostUsers');
      expect(containerOf(plain).securityContext).toEqual(PLAIN_SECURITY_CONTEXT);
      expect(unknownEnvNames(plain)).toEqual([]);
      expect(plain.notes).not.toContain('Script checks');
    }
  });
});

/** The container of a pod that runs no script, or refuses them: the images' user, nothing but NET_RAW, the runtime's default profile. */
const PLAIN_SECURITY_CONTEXT = {
  allowPrivilegeEscalation: false,
  privileged: false,
  readOnlyRootFilesystem: true,
  runAsNonRoot: true,
  runAsUser: 10001,
  runAsGroup: 10001,
  capabilities: { drop: ['ALL'], add: ['NET_RAW'] },
  seccompProfile: { type: 'RuntimeDefault' },
};

describe('script isolation (sandbox.isolation)', () => {
  /** Every mode's pod, for the checks that hold for all of them. */
  const modes = {
    namespaces: render(),
    users: render(SCENARIOS.users),
    none: render(SCENARIOS.noIsolation),
    unsafe: render(SCENARIOS.unsafe),
  };

  it('always tells the agent which mode, in a variable it accepts, and sets nothing it does not read', () => {
    for (const [name, rendered] of Object.entries(modes)) {
      expect(envOf(rendered).has('SANDBOX_ISOLATION'), name).toBe(true);
      expect(agentConfigOf(rendered).sandbox.isolation, name).toBe(name === 'unsafe' ? 'none' : name);
      expect(unknownEnvNames(rendered), name).toEqual([]);
      expect(unmountedWritablePaths(rendered), name).toEqual([]);
      // Whatever the mode: no privilege escalation, never privileged, a read-only root, every capability dropped first.
      expect(containerOf(rendered).securityContext, name).toMatchObject({ allowPrivilegeEscalation: false, privileged: false, readOnlyRootFilesystem: true });
      expect(containerOf(rendered).securityContext.capabilities.drop, name).toEqual(['ALL']);
    }
  });

  it('namespaces: non-root, with a user namespace, an unmasked /proc and the seccomp and AppArmor profiles of the values', () => {
    const pod = podOf(modes.namespaces);
    expect(pod.hostUsers).toBe(false);
    expect(containerOf(modes.namespaces).securityContext).toEqual({
      ...PLAIN_SECURITY_CONTEXT,
      procMount: 'Unmasked',
      seccompProfile: { type: 'Unconfined' },
      appArmorProfile: { type: 'Unconfined' },
    });
  });

  it('namespaces with the shipped seccomp profile installed on the nodes, and a Localhost AppArmor profile', () => {
    const rendered = render(SCENARIOS.seccompLocalhost);
    expect(containerOf(rendered).securityContext).toMatchObject({
      procMount: 'Unmasked',
      seccompProfile: { type: 'Localhost', localhostProfile: 'outpost-agent.json' },
      appArmorProfile: { type: 'Localhost', localhostProfile: 'outpost-agent' },
    });
    // The name the values suggest is the file the repository ships.
    expect(readFileSync(resolve(CHART_DIR, 'values.yaml'), 'utf8')).toContain('localhostProfile: outpost-agent.json');
    expect(JSON.parse(readFileSync(resolve(ROOT, 'deploy/seccomp/outpost-agent.json'), 'utf8'))).toHaveProperty('syscalls');
  });

  it('namespaces on nodes without AppArmor: no AppArmor field at all', () => {
    const rendered = render(SCENARIOS.noAppArmor);
    expect(containerOf(rendered).securityContext).not.toHaveProperty('appArmorProfile');
    expect(containerOf(rendered).securityContext).toMatchObject({ procMount: 'Unmasked', seccompProfile: { type: 'Unconfined' } });
  });

  it('users: root with exactly the capabilities a fresh user per job needs, and the runtime\'s default profiles', () => {
    const rendered = modes.users;
    expect(podOf(rendered)).not.toHaveProperty('hostUsers');
    expect(containerOf(rendered).securityContext).toEqual({
      allowPrivilegeEscalation: false,
      privileged: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: false,
      runAsUser: 0,
      runAsGroup: 0,
      // SETUID, SETGID: become the job's user; SETPCAP: empty its bounding set; KILL: end its processes;
      // CHOWN, DAC_OVERRIDE, FOWNER: give it its directories and remove them after.
      capabilities: { drop: ['ALL'], add: ['CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'KILL', 'SETGID', 'SETPCAP', 'SETUID', 'NET_RAW'] },
      seccompProfile: { type: 'RuntimeDefault' },
    });
    // Root's own home is on the read-only root: npm's cache goes to the home volume instead.
    expect(envValue(rendered, 'HOME')).toBe('/home/outpost');
    expect(containerOf(rendered).volumeMounts).toContainEqual({ name: 'home', mountPath: '/home/outpost' });
    expect(envOf(modes.namespaces).has('HOME')).toBe(false);
  });

  it('users: closes the agent\'s volumes to the jobs\' users first, since an emptyDir is writable by all', () => {
    for (const scenario of [SCENARIOS.users, { ...SCENARIOS.users, dependencyCache: { enabled: false } }]) {
      const rendered = render(scenario);
      const [init, ...more] = podOf(rendered).initContainers as Record<string, any>[];
      expect(more).toEqual([]);
      expect(init!.image).toBe(containerOf(rendered).image);
      // Root, as the volumes' owner, with no capability at all.
      expect(init!.securityContext).toMatchObject({ runAsUser: 0, allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
      expect(init!.securityContext.capabilities).not.toHaveProperty('add');
      // Every volume the agent has, at the same place; /tmp sticky, the home the agent's alone, the rest closed to writes by others.
      const agentMounts = containerOf(rendered).volumeMounts as Record<string, any>[];
      expect(init!.volumeMounts).toEqual(agentMounts);
      const script = (init!.command as string[]).join(' ');
      expect(script).toMatch(/^\/bin\/sh -c chmod 1777 \/tmp && chmod 700 \/home\/outpost && chmod 755 /);
      for (const mount of agentMounts.slice(2)) expect(script, mount.mountPath).toContain(` ${mount.mountPath as string}`);
    }
    for (const rendered of [modes.namespaces, modes.none, modes.unsafe]) expect(podOf(rendered)).not.toHaveProperty('initContainers');
  });

  it('none: the plain non-root pod, and script checks refused unless the unsafe variable is asked for', () => {
    for (const rendered of [modes.none, modes.unsafe]) {
      expect(podOf(rendered)).not.toHaveProperty('hostUsers');
      expect(containerOf(rendered).securityContext).toEqual(PLAIN_SECURITY_CONTEXT);
      expect(envValue(rendered, 'SANDBOX_ISOLATION')).toBe('none');
    }
    expect(envOf(modes.none).has('SANDBOX_ALLOW_UNSAFE_NO_ISOLATION')).toBe(false);
    expect(agentConfigOf(modes.none).sandbox.allowUnsafeNoIsolation).toBe(false);
    expect(envValue(modes.unsafe, 'SANDBOX_ALLOW_UNSAFE_NO_ISOLATION')).toBe('true');
    expect(agentConfigOf(modes.unsafe).sandbox.allowUnsafeNoIsolation).toBe(true);
  });

  it('netRaw false drops NET_RAW too, and leaves what users needs', () => {
    expect(containerOf(render(SCENARIOS.noNetRaw)).securityContext.capabilities).toEqual({ drop: ['ALL'] });
    expect(containerOf(render(SCENARIOS.usersNoNetRaw)).securityContext.capabilities).toEqual({
      drop: ['ALL'],
      add: ['CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'KILL', 'SETGID', 'SETPCAP', 'SETUID'],
    });
  });

  it('says in its notes what the mode means and how to see which isolation runs', () => {
    expect(modes.namespaces.notes).toContain('hostUsers: false');
    expect(modes.namespaces.notes).toContain('script isolation:');
    expect(modes.namespaces.notes).toContain('outpost_sandbox_isolation');
    expect(modes.users.notes).toContain('fresh user id');
    expect(modes.none.notes).toContain('SANDBOX_UNAVAILABLE');
    expect(modes.unsafe.notes).toMatch(/^WARNING: script checks run without isolation/m);
    for (const rendered of Object.values(modes)) expect(rendered.notes).not.toContain(KEY);
  });
});

describe('the API key from a Secret of the user\'s', () => {
  it('existingSecret: names that Secret and makes none', () => {
    const rendered = render(SCENARIOS.existingSecret);
    expect(objectsOf(rendered, 'Secret')).toEqual([]);
    expect(envOf(rendered).get('API_KEY')?.valueFrom).toEqual({ secretKeyRef: { name: 'outpost-key', key: 'api-key' } });
    expect(rendered.notes).toContain('outpost-key');
  });

  it('apiKeySecret.create false with a name and key: reads that entry', () => {
    const rendered = render(SCENARIOS.namedSecret);
    expect(objectsOf(rendered, 'Secret')).toEqual([]);
    expect(envOf(rendered).get('API_KEY')?.valueFrom).toEqual({ secretKeyRef: { name: 'my-key', key: 'token' } });
  });
});

describe('an external Redis', () => {
  it('from a URL: kept in a Secret of its own, read into REDIS_URL', () => {
    const rendered = render(SCENARIOS.redisUrl);
    const secret = objectsOf(rendered, 'Secret').find((object) => object.metadata.name === `${FULLNAME}-redis`);
    expect(Buffer.from(secret!.data['redis-url'], 'base64').toString()).toBe('redis://:secret@redis.example:6379/0');
    expect(envOf(rendered).get('REDIS_URL')?.valueFrom).toEqual({ secretKeyRef: { name: `${FULLNAME}-redis`, key: 'redis-url' } });
    expect(JSON.stringify(deploymentOf(rendered))).not.toContain(':secret@');
    expect(unknownEnvNames(rendered)).toEqual([]);
  });

  it('from the user\'s Secret: read from it, and no Secret made', () => {
    const rendered = render(SCENARIOS.redisSecret);
    expect(objectsOf(rendered, 'Secret').map((object) => object.metadata.name)).toEqual([FULLNAME]);
    expect(envOf(rendered).get('REDIS_URL')?.valueFrom).toEqual({ secretKeyRef: { name: 'redis-conn', key: 'url' } });
  });

  it('not given: the embedded redis-server, so no REDIS_URL', () => {
    expect(envOf(render()).has('REDIS_URL')).toBe(false);
  });
});

describe('a HorizontalPodAutoscaler', () => {
  const rendered = render(SCENARIOS.hpa);

  it('scales the Deployment on CPU and memory, which then has no replica count of its own', () => {
    const hpa = single(rendered, 'HorizontalPodAutoscaler');
    expect(hpa.apiVersion).toBe('autoscaling/v2');
    expect(hpa.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: deploymentOf(rendered).metadata.name });
    expect(hpa.spec).toMatchObject({ minReplicas: 1, maxReplicas: 5, behavior: { scaleDown: { stabilizationWindowSeconds: 600 } } });
    expect(hpa.spec.metrics).toEqual([
      { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } },
      { type: 'Resource', resource: { name: 'memory', target: { type: 'Utilization', averageUtilization: 70 } } },
    ]);
    expect(deploymentOf(rendered).spec).not.toHaveProperty('replicas');
  });
});

describe('a KEDA ScaledObject', () => {
  const rendered = render(SCENARIOS.keda);
  const scaled = single(rendered, 'ScaledObject');
  const trigger = scaled.spec.triggers[0];

  it('scales the Deployment from Prometheus, which then has no replica count of its own', () => {
    expect(scaled.apiVersion).toBe('keda.sh/v1alpha1');
    expect(scaled.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: FULLNAME });
    expect(scaled.spec).toMatchObject({ minReplicaCount: 1, maxReplicaCount: 5, pollingInterval: 30, cooldownPeriod: 300 });
    expect(scaled.spec.triggers).toHaveLength(1);
    expect(trigger).toMatchObject({ type: 'prometheus', metricType: 'Value', metadata: { serverAddress: 'http://prometheus.monitoring:9090', threshold: '0.8' } });
    expect(objectsOf(rendered, 'HorizontalPodAutoscaler')).toEqual([]);
    expect(deploymentOf(rendered).spec).not.toHaveProperty('replicas');
  });

  it('by default asks for the script lane\'s busy share, over the metrics the agent exports, of this release\'s agents', () => {
    const query = trigger.metadata.query as string;
    const metrics = [...query.matchAll(/(\w+)\{([^}]*)\}/g)];
    expect(metrics.map((match) => match[1])).toEqual(['outpost_jobs_in_flight', 'outpost_queue_depth', 'outpost_capacity']);
    for (const [, name, labels] of metrics) {
      expect(QUEUE_METRICS, name).toContain(name);
      // The labels the ServiceMonitor's targets carry: the release's namespace and Service.
      expect(labels).toBe(`lane="script",namespace="${RELEASE.namespace}",service="${single(rendered, 'Service').metadata.name as string}"`);
    }
    expect(query).toMatch(/^\(sum\(.+\) \+ sum\(.+\)\) \/ sum\(.+\)$/);
  });

  it('for the uptime variant, the uptime lane\'s probes in flight over capacity', () => {
    const query = single(render(SCENARIOS.kedaUptime), 'ScaledObject').spec.triggers[0].metadata.query as string;
    expect([...query.matchAll(/(\w+)\{lane="(\w+)"/g)].map((match) => `${match[1]} ${match[2]}`)).toEqual(['outpost_jobs_in_flight uptime', 'outpost_capacity uptime']);
  });

  it('with source service, counts the location\'s jobs at the service in agents\' worth, with no ServiceMonitor, from zero', () => {
    const service = single(render(SCENARIOS.kedaService), 'ScaledObject');
    expect(service.spec.minReplicaCount).toBe(0);
    expect(service.spec.triggers[0]).toMatchObject({
      metricType: 'AverageValue',
      metadata: { query: `sum(outpost_service_jobs{private_location_id="${LOCATION_ID}",lane="script"}) / 1`, threshold: '0.8' },
    });
    const uptime = single(render(SCENARIOS.kedaServiceUptime), 'ScaledObject');
    expect(uptime.spec.triggers[0].metadata.query).toBe(`sum(outpost_service_jobs{private_location_id="${LOCATION_ID}",lane="uptime"}) / 250`);
  });

  it('with source service, asks for a metric and labels the service exports', async () => {
    const query = single(render(SCENARIOS.kedaService), 'ScaledObject').spec.triggers[0].metadata.query as string;
    // Only the metric's definition is read: nothing is collected, so the database is never asked.
    const registry = createServiceMetrics({ query: () => Promise.reject(new Error('not collected')) } as Queryable);
    for (const [, name, labels] of query.matchAll(/(\w+)\{([^}]*)\}/g)) {
      const metric = registry.getSingleMetric(name!) as unknown as { labelNames: string[] } | undefined;
      expect(metric, name).toBeDefined();
      for (const [, label] of labels!.matchAll(/(\w+)=/g)) expect(metric!.labelNames, `${name} ${label}`).toContain(label);
    }
  });

  it('takes a query, metric type, threshold, HPA behavior and authentication of the user\'s', () => {
    const custom = single(render(SCENARIOS.kedaCustom), 'ScaledObject');
    expect(custom.spec.triggers[0]).toEqual({
      type: 'prometheus',
      metricType: 'AverageValue',
      metadata: { serverAddress: 'http://prometheus.monitoring:9090', query: 'sum(outpost_free_capacity{lane="script"})', threshold: '1' },
      authenticationRef: { name: 'prometheus-auth' },
    });
    expect(custom.spec.minReplicaCount).toBe(0);
    expect(custom.spec.advanced).toEqual({ horizontalPodAutoscalerConfig: { behavior: { scaleDown: { stabilizationWindowSeconds: 900 } } } });
  });
});

describe('metrics scraping', () => {
  it('a ServiceMonitor scrapes /metrics through a Service in front of the health port', () => {
    const rendered = render(SCENARIOS.serviceMonitor);
    const monitor = single(rendered, 'ServiceMonitor');
    const service = single(rendered, 'Service');
    expect(monitor.apiVersion).toBe('monitoring.coreos.com/v1');
    expect(monitor.metadata.namespace).toBe('monitoring');
    expect(monitor.metadata.labels).toMatchObject({ release: 'prometheus' });
    expect(monitor.spec.namespaceSelector).toEqual({ matchNames: [RELEASE.namespace] });
    expect(service.metadata.labels).toMatchObject(monitor.spec.selector.matchLabels);
    expect(monitor.spec.endpoints).toEqual([
      { port: 'metrics', path: '/metrics', interval: '30s', scrapeTimeout: '10s', relabelings: [{ action: 'labeldrop', regex: 'pod_template_hash' }] },
    ]);
    const port = (service.spec.ports as Record<string, any>[]).find((candidate) => candidate.name === monitor.spec.endpoints[0].port);
    expect(port).toMatchObject({ port: 8081, targetPort: 'health' });
    expect((containerOf(rendered).ports as Record<string, any>[]).map((candidate) => candidate.name)).toContain(port!.targetPort);
    expect(deploymentOf(rendered).spec.template.metadata.labels).toMatchObject(service.spec.selector);
    expect(service.spec.type).toBe('ClusterIP');
  });

  it('a Service alone, on another port, moves the probes and AGENT_HEALTH_PORT with it', () => {
    const rendered = render(SCENARIOS.metricsService);
    const service = single(rendered, 'Service');
    expect(service.spec.ports).toEqual([{ name: 'metrics', port: 9100, targetPort: 'health', protocol: 'TCP' }]);
    expect(service.metadata.annotations).toEqual({ 'prometheus.io/scrape': 'true' });
    expect(containerOf(rendered).ports).toEqual([{ name: 'health', containerPort: 9100, protocol: 'TCP' }]);
    expect(agentConfigOf(rendered).healthPort).toBe(9100);
    expect(objectsOf(rendered, 'ServiceMonitor')).toEqual([]);
  });
});

describe('a PodDisruptionBudget', () => {
  it('lets one agent at a time be evicted by default', () => {
    const rendered = render(SCENARIOS.pdb);
    const budget = single(rendered, 'PodDisruptionBudget');
    expect(budget.apiVersion).toBe('policy/v1');
    expect(budget.spec).toEqual({ maxUnavailable: 1, selector: { matchLabels: deploymentOf(rendered).spec.selector.matchLabels } });
    expect(deploymentOf(rendered).spec.replicas).toBe(3);
  });

  it('or keeps a share available', () => {
    expect(single(render(SCENARIOS.pdbMinAvailable), 'PodDisruptionBudget').spec).toMatchObject({ minAvailable: '50%' });
    expect(single(render(SCENARIOS.pdbMinAvailable), 'PodDisruptionBudget').spec).not.toHaveProperty('maxUnavailable');
  });
});

describe('the dependency cache', () => {
  const cacheVolume = (rendered: Rendered) => (podOf(rendered).volumes as Record<string, any>[]).find((volume) => volume.name === 'dependency-cache');

  it('on a claim the chart makes', () => {
    const rendered = render(SCENARIOS.cachePvc);
    const claim = single(rendered, 'PersistentVolumeClaim');
    expect(claim.metadata).toMatchObject({ name: `${FULLNAME}-dependency-cache`, annotations: { team: 'synthetics' } });
    expect(claim.spec).toEqual({ accessModes: ['ReadWriteOnce'], storageClassName: 'fast', resources: { requests: { storage: '5Gi' } } });
    expect(cacheVolume(rendered)).toEqual({ name: 'dependency-cache', persistentVolumeClaim: { claimName: claim.metadata.name } });
    expect(unmountedWritablePaths(rendered)).toEqual([]);
  });

  it('on the user\'s claim', () => {
    const rendered = render(SCENARIOS.cacheExistingClaim);
    expect(objectsOf(rendered, 'PersistentVolumeClaim')).toEqual([]);
    expect(cacheVolume(rendered)?.persistentVolumeClaim).toEqual({ claimName: 'shared-cache' });
  });

  it('"-" asks for no storage class', () => {
    expect(single(render(SCENARIOS.cacheNoClass), 'PersistentVolumeClaim').spec.storageClassName).toBe('');
  });

  it('switched off: no variable, no volume', () => {
    const rendered = render(SCENARIOS.noCache);
    expect(envOf(rendered).has('DEPENDENCY_CACHE')).toBe(false);
    expect(cacheVolume(rendered)).toBeUndefined();
    expect(unmountedWritablePaths(rendered)).toEqual([]);
  });

  it('is not made for the uptime variant', () => {
    const rendered = render({ ...SCENARIOS.cachePvc, image: { variant: 'uptime' } });
    expect(objectsOf(rendered, 'PersistentVolumeClaim')).toEqual([]);
    expect(cacheVolume(rendered)).toBeUndefined();
  });
});

describe('the other values', () => {
  const rendered = render(SCENARIOS.everythingElse);
  const pod = podOf(rendered);
  const agent = containerOf(rendered);

  it('reach the pod where Kubernetes expects them', () => {
    expect(deploymentOf(rendered).metadata.name).toBe('outpost-agent');
    expect(deploymentOf(rendered).spec.selector.matchLabels['app.kubernetes.io/name']).toBe('agent');
    expect(agent.image).toBe('outpost-agent:0.2.0');
    expect(agent.imagePullPolicy).toBe('Always');
    expect(pod).toMatchObject({
      imagePullSecrets: [{ name: 'regcred' }],
      serviceAccountName: 'agents',
      priorityClassName: 'high',
      nodeSelector: { 'kubernetes.io/arch': 'amd64' },
      tolerations: SCENARIOS.everythingElse.tolerations,
      affinity: SCENARIOS.everythingElse.affinity,
      topologySpreadConstraints: SCENARIOS.everythingElse.topologySpreadConstraints,
      terminationGracePeriodSeconds: 600,
    });
    expect(deploymentOf(rendered).spec.template.metadata.annotations).toMatchObject({ 'example.com/owner': 'synthetics' });
    expect(deploymentOf(rendered).spec.template.metadata.labels).toMatchObject({ team: 'synthetics', 'app.kubernetes.io/name': 'agent' });
    expect(agent.resources).toEqual(SCENARIOS.everythingElse.resources);
    expect(agent.envFrom).toEqual([{ secretRef: { name: 'proxy' } }]);
    expect(objectsOf(rendered, 'ServiceAccount')).toEqual([]);
  });

  it('set the agent\'s variables, and the user\'s come after the chart\'s', () => {
    const config = agentConfigOf(rendered);
    expect(config).toMatchObject({ jobConcurrency: 4, logLevel: 'DEBUG', shutdownGraceMs: 570_000 });
    expect(envValue(rendered, 'EXTERNAL_OBSERVABILITY')).toBe('off');
    expect(envValue(rendered, 'SENTRY_DSN')).toBe('https://public@errors.example.com/1');
    expect([...envOf(rendered).keys()].at(-1)).toBe('SERVICE_SECRET_DB_PASSWORD');
    expect(unknownEnvNames(rendered, ['SERVICE_SECRET_DB_PASSWORD'])).toEqual([]);
  });

  it('size the emptyDirs and add the user\'s volumes', () => {
    const volumes = new Map((pod.volumes as Record<string, any>[]).map((volume) => [volume.name as string, volume]));
    expect(volumes.get('tmp')?.emptyDir).toEqual({ sizeLimit: '2Gi' });
    expect(volumes.get('sandboxes')?.emptyDir).toEqual({ medium: 'Memory', sizeLimit: '4Gi' });
    expect(volumes.get('ca')).toEqual({ name: 'ca', configMap: { name: 'corporate-ca' } });
    expect(agent.volumeMounts).toContainEqual({ name: 'ca', mountPath: '/etc/outpost-ca', readOnly: true });
    expect(unmountedWritablePaths(rendered)).toEqual([]);
  });

  it('fullnameOverride names every resource', () => {
    for (const { object } of render(SCENARIOS.fullnameOverride).manifests) expect(object.metadata.name).toBe('agents');
  });
});

describe('values that cannot work fail the render with a message', () => {
  it('both autoscalers', () => {
    expect(failure({ autoscaling: { enabled: true }, serviceMonitor: { enabled: true }, keda: { enabled: true, serverAddress: 'http://prometheus:9090' } })).toMatch(
      /autoscaling\.enabled and keda\.enabled are both true/,
    );
  });

  it('no apiUrl', () => {
    expect(failure({ apiUrl: '' })).toMatch(/^apiUrl is required/);
  });

  it('an agent grace that is not below the pod\'s', () => {
    expect(failure({ shutdownGraceSeconds: 300 })).toMatch(/shutdownGraceSeconds \(300\) must be lower than terminationGracePeriodSeconds \(300\)/);
    expect(failure({ terminationGracePeriodSeconds: 200 })).toMatch(/shutdownGraceSeconds \(280\) must be lower than terminationGracePeriodSeconds \(200\)/);
  });

  it('no API key for the Secret the chart makes', () => {
    expect(failure({ apiKeySecret: { apiKey: '' } })).toMatch(/^apiKeySecret\.apiKey is required/);
  });

  it('no Secret at all', () => {
    expect(failure({ apiKeySecret: { create: false, apiKey: '' } })).toMatch(/set existingSecret/);
  });

  it('a Redis URL given twice', () => {
    expect(failure({ redis: { external: { url: 'redis://redis:6379', existingSecret: 'redis-conn' } } })).toMatch(/give the Redis URL one way/);
  });

  it('KEDA without a Prometheus to ask', () => {
    expect(failure({ serviceMonitor: { enabled: true }, keda: { enabled: true } })).toMatch(/^keda\.serverAddress is required/);
  });

  it('KEDA\'s default query without the ServiceMonitor whose labels it uses', () => {
    expect(failure({ keda: { enabled: true, serverAddress: 'http://prometheus:9090' } })).toMatch(/Enable serviceMonitor, or set keda\.query/);
  });

  it('KEDA at zero replicas with the default query', () => {
    expect(failure({ serviceMonitor: { enabled: true }, keda: { enabled: true, serverAddress: 'http://prometheus:9090', minReplicaCount: 0 } })).toMatch(/minReplicaCount 0 needs keda\.source service or a keda\.query/);
  });

  it('KEDA on the service\'s metrics without the location they are of', () => {
    expect(failure({ keda: { enabled: true, serverAddress: 'http://prometheus:9090', source: 'service' } })).toMatch(/keda\.source service needs keda\.privateLocationId/);
  });

  it('the unsafe variable asked for with an isolation mode other than none', () => {
    expect(failure({ sandbox: { allowUnsafeNoIsolation: true } })).toMatch(/sandbox\.allowUnsafeNoIsolation is true but sandbox\.isolation is namespaces/);
    expect(failure({ sandbox: { isolation: 'users', allowUnsafeNoIsolation: true } })).toMatch(/only for isolation none/);
  });

  it('the isolation variables set through env, behind the pod settings\' back', () => {
    expect(failure({ env: [{ name: 'SANDBOX_ISOLATION', value: 'none' }] })).toMatch(/env sets SANDBOX_ISOLATION.*set sandbox\.isolation/);
    expect(failure({ env: [{ name: 'SANDBOX_ALLOW_UNSAFE_NO_ISOLATION', value: 'true' }] })).toMatch(/env sets SANDBOX_ALLOW_UNSAFE_NO_ISOLATION/);
  });

  it('an unknown isolation mode, when the schema is not there to stop it first', () => {
    expect(failure({ sandbox: { isolation: 'auto' } }, { schema: false })).toMatch(/sandbox\.isolation must be namespaces, users or none, not "auto"/);
  });

  it('an unknown image variant, when the schema is not there to stop it first', () => {
    expect(failure({ image: { variant: 'browser' } }, { schema: false })).toMatch(/image\.variant must be full or uptime, not "browser"/);
  });
});

describe('these checks catch a broken chart', () => {
  it('a template naming a value values.yaml lacks', () => {
    const broken = withTemplate('templates/deployment.yaml', (source) => source.replace('.Values.terminationGracePeriodSeconds }}', '.Values.pod.terminationGracePeriodSeconds }}'));
    expect(missingValuesPaths(broken)).toEqual(['templates/deployment.yaml: .Values.pod.terminationGracePeriodSeconds']);
    expect(() => renderChart(broken, REQUIRED, RELEASE)).toThrow(/nil pointer evaluating interface \{\}\.terminationGracePeriodSeconds/);
  });

  it('a variable the agent does not read', () => {
    const broken = withTemplate('templates/deployment.yaml', (source) => source.replace('- name: LOG_LEVEL', '- name: AGENT_LOG_LEVEL'));
    expect(unknownEnvNames(renderChart(broken, REQUIRED, RELEASE))).toEqual(['AGENT_LOG_LEVEL']);
  });

  it('a writable directory left on the read-only root', () => {
    const broken = withTemplate('templates/deployment.yaml', (source) => source.replaceAll('mountPath: /var/lib/outpost/engines', 'mountPath: /var/lib/outpost/engine'));
    expect(unmountedWritablePaths(renderChart(broken, REQUIRED, RELEASE))).toEqual(['/var/lib/outpost/engines/installed']);
  });

  it('output that is not YAML, or YAML with a key twice', () => {
    const values = mergeValues(REQUIRED, SCENARIOS.serviceMonitor) as Record<string, unknown>;
    const misindented = withTemplate('templates/service.yaml', (source) => source.replace('\n  ports:', '\n   ports:'));
    expect(() => renderChart(misindented, values, RELEASE)).toThrow(/templates\/service\.yaml does not render to valid YAML/);
    const twice = withTemplate('templates/service.yaml', (source) => source.replace('type: ClusterIP', 'type: ClusterIP\n  type: NodePort'));
    expect(() => renderChart(twice, values, RELEASE)).toThrow(/Map keys must be unique/);
  });

  it('a number compared with a value, which Helm refuses (float64 against int)', () => {
    const broken = withTemplate('templates/_helpers.tpl', (source) => source.replace('ge (int .Values.shutdownGraceSeconds) (int .Values.terminationGracePeriodSeconds)', 'ge .Values.shutdownGraceSeconds 300'));
    expect(() => renderChart(broken, REQUIRED, RELEASE)).toThrow(/incompatible types for comparison \(float64 and int\)/);
  });
});

describe('the template renderer', () => {
  /** Renders one template's text, with values. */
  const text = (source: string, values: Record<string, unknown> = {}) =>
    renderChart({ metadata: { name: 't', version: '1.0.0', appVersion: '1' }, values, templates: new Map([['templates/NOTES.txt', source]]) }).notes;

  it('trims whitespace at - markers and drops comments', () => {
    expect(text('a  \n  {{- "b" -}}  \n c{{/* gone */}}')).toBe('abc');
  });

  it('treats empty values as false and stops and/or at the first decisive argument', () => {
    expect(text('{{ default "d" .Values.zero }} {{ default "d" .Values.no }} {{ default "d" .Values.none }}', { zero: 0, no: false })).toBe('d d d');
    expect(text('{{ if and .Values.off (fail "evaluated") }}x{{ else }}y{{ end }}', { off: false })).toBe('y');
    expect(text('{{ or .Values.a "b" }}', { a: '' })).toBe('b');
  });

  it('prints numbers as Helm does', () => {
    expect(text('{{ .Values.a }} {{ .Values.b }} {{ .Values.c }} {{ int .Values.b }}', { a: 300, b: 1_000_000, c: 0.8 })).toBe('300 1e+06 0.8 1000000');
  });

  it('ranges over maps in key order and over lists, with variables', () => {
    expect(text('{{ range $k, $v := .Values.m }}{{ $k }}={{ $v }};{{ end }}{{ range .Values.l }}[{{ . }}]{{ end }}', { m: { b: '2', a: '1' }, l: ['x', 'y'] })).toBe('a=1;b=2;[x][y]');
  });

  it('includes defined templates and indents them', () => {
    expect(text('{{ define "t.x" }}a: 1\nb: 2{{ end }}k:{{ include "t.x" . | nindent 2 }}')).toBe('k:\n  a: 1\n  b: 2');
  });

  it('refuses what it does not know rather than guess', () => {
    expect(() => text('{{ .Values.a.b }}')).toThrow(/nil pointer/);
    expect(() => text('{{ .Chart.Nmae }}')).toThrow(/can't evaluate field Nmae/);
    expect(() => text('{{ tpl "x" . }}')).toThrow(/function "tpl" not defined/);
    expect(() => text('{{ if true }}x')).toThrow(/has no end/);
    expect(() => text('{{ .Values.m }}', { m: { a: 1 } })).toThrow(/use toYaml/);
    expect(() => text('{{ printf "%s" .Values.n }}', { n: 1 })).toThrow(/printf %s of a float64/);
  });

  it('reads the manifests as YAML 1.1, where an unquoted off is false', () => {
    const rendered = renderChart({ metadata: { name: 't', version: '1.0.0', appVersion: '1' }, values: {}, templates: new Map([['templates/cm.yaml', 'kind: ConfigMap\ndata:\n  a: off\n  b: "off"\n']]) });
    expect(rendered.manifests[0]!.object.data).toEqual({ a: false, b: 'off' });
  });
});

/** Value paths down to the free-form parts (maps and lists handed to Kubernetes whole), per the schema. */
function valuePaths(values: Record<string, unknown>, node: any = schema, prefix = ''): string[] {
  return Object.entries(values).flatMap(([key, value]) => {
    const path = `${prefix}${key}`;
    const child = node.properties?.[key];
    const structured = child?.properties !== undefined && typeof value === 'object' && value !== null && Object.keys(value).length > 0;
    return structured ? valuePaths(value as Record<string, unknown>, child, `${path}.`) : [path];
  });
}

describe('docs/kubernetes.md', () => {
  const doc = readFileSync(resolve(ROOT, 'docs/kubernetes.md'), 'utf8');
  const section = (heading: string) => doc.slice(doc.indexOf(`${heading}\n`), doc.indexOf('\n#', doc.indexOf(`${heading}\n`) + heading.length));
  const tableOf = (text: string) => new Map([...text.matchAll(/^\| `([^`]+)` \| (.*?) \|/gm)].map((match) => [match[1]!, match[2]!]));
  const rows = tableOf(section('## Values'));

  it('lists every value in its values table, and no value the chart lacks', () => {
    const paths = valuePaths(chart.values);
    expect(paths.filter((path) => !rows.has(path))).toEqual([]);
    expect([...rows.keys()].filter((path) => !paths.includes(path))).toEqual([]);
  });

  it('names the queue metrics the KEDA section is about', () => {
    expect([...tableOf(section('### KEDA')).keys()]).toEqual(QUEUE_METRICS);
  });

  it('gives the defaults of the plain values as values.yaml has them', () => {
    for (const path of valuePaths(chart.values)) {
      const value = path.split('.').reduce<any>((here, key) => here[key], chart.values);
      if (typeof value === 'object') continue;
      const shown = value === '' ? '""' : String(value);
      expect([`\`${shown}\``, `\`"${shown}"\``], path).toContain(rows.get(path));
    }
  });
});

describe('values.yaml as written', () => {
  it('says above every top-level value what it is for', () => {
    const lines = readFileSync(resolve(CHART_DIR, 'values.yaml'), 'utf8').split('\n');
    const uncommented = lines.filter((line, i) => /^\w+:/.test(line) && !(lines[i - 1] ?? '').startsWith('#'));
    expect(uncommented).toEqual([]);
  });
});

describe('every value set the tests render', () => {
  it('renders manifests valid by the Kubernetes API\'s schemas (and KEDA\'s and the Prometheus Operator\'s)', async () => {
    for (const [name, overrides] of Object.entries(SCENARIOS)) {
      const rendered = render(overrides);
      const errors = (await Promise.all(rendered.manifests.map((manifest) => kubernetesSchemaErrors(manifest.object)))).flat();
      expect(errors, name).toEqual([]);
    }
  });
});
