import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Ajv } from 'ajv';
import addFormatsImport from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { loadServiceConfig, serviceEnvSpecs } from '../../src/service/config.js';
import { finalStage, parseDockerfile } from '../support/dockerfile.js';
import { loadChart, mergeValues, renderChart, TemplateFailure, valuesReferences, type Rendered } from '../support/helm-template.js';
import { containerOf, envOf, objectsOf, podOf, single } from '../support/rendered-objects.js';
import { kubernetesSchemaErrors } from '../support/kubernetes-schemas.js';

// Helm cannot run here: the chart is rendered by test/support/helm-template.ts,
// and what it makes is checked against the Kubernetes API's schemas and the
// service's own configuration parser.

// ajv-formats ships CommonJS with a default export property.
const addFormats = addFormatsImport as unknown as (ajv: Ajv) => Ajv;

const ROOT = resolve(import.meta.dirname, '../..');
const CHART_DIR = resolve(ROOT, 'charts/outpost-service');
const chart = loadChart(CHART_DIR);
const validateValues = addFormats(new Ajv({ allErrors: true, strict: true, allowUnionTypes: true })).compile(
  JSON.parse(readFileSync(resolve(CHART_DIR, 'values.schema.json'), 'utf8')) as object,
);

const DATABASE_URL = 'postgres://outpost:secret@postgres.databases:5432/outpost';
const REQUIRED = { database: { url: DATABASE_URL } };
const RELEASE = { name: 'monitoring', namespace: 'outpost' };
const FULLNAME = 'monitoring-outpost-service';
const ACCOUNT = '3f1c2a9e-3b7d-4c55-9e21-0a8b4f7d2c13';
const LOCATION_KEY = `pl_${'l'.repeat(40)}`;
const BOOTSTRAP = { accountId: ACCOUNT, apiKey: 'bootstrap-api-key-0001', privateLocation: 'cluster', privateLocationKey: LOCATION_KEY };
const SHARED = { artifacts: { persistence: { enabled: true } } };

const SCENARIOS = {
  defaults: {},
  bootstrap: { bootstrap: BOOTSTRAP },
  existingSecret: {
    database: { url: '' },
    existingSecret: 'outpost-service',
    bootstrap: { ...BOOTSTRAP, apiKey: '', privateLocationKey: '' },
    metrics: { tokenInExistingSecret: true },
    serviceMonitor: { enabled: true },
  },
  ingress: {
    ingress: { enabled: true, className: 'nginx', annotations: { 'nginx.ingress.kubernetes.io/proxy-read-timeout': '60' }, tls: [{ secretName: 'tls', hosts: ['monitoring.example.com'] }] },
  },
  publicUrl: { publicUrl: 'https://status.example.org', ingress: { enabled: true } },
  replicas: { ...SHARED, replicaCount: 3, podDisruptionBudget: { enabled: true } },
  hpa: { ...SHARED, autoscaling: { enabled: true, targetMemoryUtilizationPercentage: 80, behavior: { scaleDown: { stabilizationWindowSeconds: 300 } } }, podDisruptionBudget: { enabled: true, minAvailable: '50%' } },
  existingClaim: { artifacts: { persistence: { enabled: true, existingClaim: 'artifacts' } } },
  noStorageClass: { artifacts: { persistence: { enabled: true, storageClassName: '-', annotations: { team: 'synthetics' } } } },
  storageClass: { artifacts: { persistence: { enabled: true, storageClassName: 'nfs' } } },
  serviceMonitor: { metrics: { token: 'metrics-token-0001-abcdef' }, serviceMonitor: { enabled: true, namespace: 'prometheus', labels: { release: 'prometheus' }, relabelings: [{ action: 'labeldrop', regex: 'pod_template_hash' }], metricRelabelings: [{ action: 'drop', regex: 'nodejs_.*', sourceLabels: ['__name__'] }] } },
  everythingElse: {
    nameOverride: 'api',
    image: { repository: 'registry.example.com/outpost-service', tag: '0.2.0', pullPolicy: 'Always' },
    imagePullSecrets: [{ name: 'regcred' }],
    logLevel: 'DEBUG',
    database: { connectTimeoutSeconds: 120 },
    env: [{ name: 'SMTP_URL', valueFrom: { secretKeyRef: { name: 'mail', key: 'url' } } }],
    envFrom: [{ configMapRef: { name: 'outpost-settings' } }],
    service: { type: 'LoadBalancer', port: 8080, annotations: { 'service.beta.kubernetes.io/aws-load-balancer-internal': 'true' } },
    serviceAccount: { create: false, name: 'monitoring', annotations: { a: 'b' } },
    podAnnotations: { 'example.com/owner': 'synthetics' },
    podLabels: { team: 'synthetics' },
    priorityClassName: 'high',
    nodeSelector: { 'kubernetes.io/arch': 'amd64' },
    tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'monitoring', effect: 'NoSchedule' }],
    affinity: { podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [] } },
    topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: { team: 'synthetics' } } }],
    extraVolumes: [{ name: 'ca', configMap: { name: 'corporate-ca' } }],
    extraVolumeMounts: [{ name: 'ca', mountPath: '/etc/outpost-ca', readOnly: true }],
    terminationGracePeriodSeconds: 60,
    resources: { requests: { cpu: '1', memory: '512Mi' }, limits: { memory: '2Gi' } },
  },
  fullnameOverride: { fullnameOverride: 'outpost' },
} satisfies Record<string, Record<string, unknown>>;

function schemaErrors(values: unknown): string[] {
  return validateValues(values) ? [] : (validateValues.errors ?? []).map((error) => `${error.instancePath} ${error.message}`);
}

function render(overrides: Record<string, unknown> = {}): Rendered {
  const merged = mergeValues(REQUIRED, overrides) as Record<string, unknown>;
  expect(schemaErrors(mergeValues(chart.values, merged)), 'values against values.schema.json').toEqual([]);
  return renderChart(chart, merged, RELEASE);
}

function failure(overrides: Record<string, unknown>): string {
  try {
    render(overrides);
  } catch (error) {
    expect(error).toBeInstanceOf(TemplateFailure);
    return (error as Error).message;
  }
  throw new Error('rendered without failing');
}


/** The service's environment as the pod gets it: values, and secretKeyRefs resolved from the chart's Secret. */
function resolvedEnv(rendered: Rendered, skip: readonly string[] = []): Record<string, string> {
  const secrets = new Map(objectsOf(rendered, 'Secret').map((secret) => [secret.metadata.name as string, secret.data as Record<string, string>]));
  const env: Record<string, string> = {};
  for (const [name, entry] of envOf(rendered)) {
    if (skip.includes(name)) continue;
    if (entry.value !== undefined) {
      env[name] = entry.value as string;
      continue;
    }
    const ref = entry.valueFrom.secretKeyRef as { name: string; key: string };
    const data = secrets.get(ref.name);
    expect(data, `${name}: Secret ${ref.name}`).toBeDefined();
    expect(data![ref.key], `${name}: entry ${ref.key} of Secret ${ref.name}`).toBeDefined();
    env[name] = Buffer.from(data![ref.key]!, 'base64').toString('utf8');
  }
  return env;
}

function leafPaths(value: unknown, prefix = ''): string[] {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || Object.keys(value).length === 0) return [prefix];
  return Object.entries(value).flatMap(([key, child]) => leafPaths(child, prefix ? `${prefix}.${key}` : key));
}

describe('the service chart: Chart.yaml and values', () => {
  it('describes an application chart whose appVersion is the service\'s version', () => {
    const pkg = JSON.parse(readFileSync(resolve(ROOT, 'package.json'), 'utf8')) as { version: string };
    expect(chart.metadata).toMatchObject({ apiVersion: 'v2', name: 'outpost-service', type: 'application', appVersion: pkg.version });
  });

  it('uses every value it has, and has every value a template names', () => {
    const referenced = new Set([...chart.templates.values()].flatMap((source) => valuesReferences(source)));
    const read = new Set<string>();
    for (const overrides of Object.values(SCENARIOS)) for (const path of render(overrides).valuesRead) read.add(path);
    const used = (path: string) => [...referenced, ...read].some((reference) => path === reference || path.startsWith(`${reference}.`));
    expect(leafPaths(chart.values).filter((path) => !used(path))).toEqual([]);
    const has = (path: string) => path.split('.').reduce<unknown>((here, key) => (here as Record<string, unknown> | undefined)?.[key], chart.values) !== undefined;
    expect([...referenced].filter((path) => !has(path))).toEqual([]);
  });

  it('passes its own schema, which turns away wrong values before any template runs', () => {
    expect(schemaErrors(chart.values)).toEqual([]);
    const rejected = (overrides: Record<string, unknown>) => schemaErrors(mergeValues(chart.values, overrides));
    expect(rejected({ database: { url: 'mysql://db/outpost' } })).not.toEqual([]);
    expect(rejected({ bootstrap: { accountId: 'not-a-uuid' } })).not.toEqual([]);
    expect(rejected({ bootstrap: { privateLocationKey: 'ok_wrong-prefix-000000000000000000000000' } })).not.toEqual([]);
    expect(rejected({ bootstrap: { privateLocation: 'Upper' } })).not.toEqual([]);
    expect(rejected({ metrics: { token: 'short' } })).not.toEqual([]);
    expect(rejected({ logLevel: 'TRACE' })).not.toEqual([]);
    expect(rejected({ replicas: 2 })).not.toEqual([]);
    expect(rejected({ artifacts: { persistence: { size: 'lots' } } })).not.toEqual([]);
  });
});

describe('the service chart: rendered manifests', () => {
  it.each(Object.entries(SCENARIOS))('%s: every manifest is valid by the Kubernetes API\'s schemas', async (_name, overrides) => {
    const rendered = render(overrides);
    const errors = (await Promise.all(rendered.manifests.map((manifest) => kubernetesSchemaErrors(manifest.object)))).flat();
    expect(errors).toEqual([]);
    expect(rendered.notes).toContain(`deployment/${single(rendered, 'Deployment').metadata.name}`);
  });

  it.each(Object.entries(SCENARIOS))('%s: sets only variables the service reads, which its configuration parser accepts', (_name, overrides) => {
    const rendered = render(overrides);
    const userNames = ((overrides as { env?: { name: string }[] }).env ?? []).map((entry) => entry.name);
    expect([...envOf(rendered).keys()].filter((name) => !(name in serviceEnvSpecs) && !userNames.includes(name))).toEqual([]);
    if ((overrides as { existingSecret?: string }).existingSecret) return;
    // The user's own variables come from Secrets the chart does not make.
    const config = loadServiceConfig(resolvedEnv(rendered, userNames));
    expect(config.databaseUrl).toBe(DATABASE_URL);
    expect(config.port).toBe(containerOf(rendered).ports[0].containerPort);
    expect(config.artifactsDir).toBe(containerOf(rendered).volumeMounts.find((mount: { name: string }) => mount.name === 'artifacts').mountPath);
  });

  it('keeps the database URL and the bootstrap keys in its Secret, and hands the agents\' key to the service', () => {
    const rendered = render(SCENARIOS.bootstrap);
    const env = envOf(rendered);
    for (const name of ['DATABASE_URL', 'BOOTSTRAP_API_KEY', 'BOOTSTRAP_PRIVATE_LOCATION_KEY']) {
      expect(env.get(name)?.value, name).toBeUndefined();
      expect(env.get(name)?.valueFrom.secretKeyRef.name, name).toBe(FULLNAME);
    }
    const config = loadServiceConfig(resolvedEnv(rendered));
    expect(config.bootstrap?.accountId).toBe(ACCOUNT);
    expect(config.bootstrap?.apiKey.reveal()).toBe(BOOTSTRAP.apiKey);
    expect(config.bootstrapLocation?.slugName).toBe('cluster');
    expect(config.bootstrapLocation?.key.reveal()).toBe(LOCATION_KEY);
    // Nothing secret in the pod spec itself.
    expect(JSON.stringify(single(rendered, 'Deployment'))).not.toMatch(/secret@|bootstrap-api-key-0001|pl_l{40}/);
    // A new key rolls the pods.
    const rotated = render({ bootstrap: { ...BOOTSTRAP, privateLocationKey: `pl_${'m'.repeat(40)}` } });
    const checksum = (subject: Rendered) => single(subject, 'Deployment').spec.template.metadata.annotations['checksum/secret'];
    expect(checksum(rotated)).not.toBe(checksum(rendered));
  });

  it('reads everything from a Secret of the user\'s, and makes none, with existingSecret', () => {
    const rendered = render(SCENARIOS.existingSecret);
    expect(objectsOf(rendered, 'Secret')).toEqual([]);
    const refs = [...envOf(rendered).values()].filter((entry) => entry.valueFrom).map((entry) => [entry.name, entry.valueFrom.secretKeyRef.name, entry.valueFrom.secretKeyRef.key]);
    expect(refs).toEqual([
      ['DATABASE_URL', 'outpost-service', 'database-url'],
      ['BOOTSTRAP_API_KEY', 'outpost-service', 'bootstrap-api-key'],
      ['BOOTSTRAP_PRIVATE_LOCATION_KEY', 'outpost-service', 'bootstrap-private-location-key'],
      ['METRICS_TOKEN', 'outpost-service', 'metrics-token'],
    ]);
    const endpoint = single(rendered, 'ServiceMonitor').spec.endpoints[0];
    expect(endpoint.authorization.credentials).toEqual({ name: 'outpost-service', key: 'metrics-token' });
  });

  it('probes the routes the service answers: liveness at start and after, readiness on the database', () => {
    const rendered = render();
    const container = containerOf(rendered);
    const server = readFileSync(resolve(ROOT, 'src/service/server.ts'), 'utf8');
    expect(container.startupProbe.httpGet.path).toBe('/-/liveness');
    expect(container.livenessProbe.httpGet.path).toBe('/-/liveness');
    expect(container.readinessProbe.httpGet.path).toBe('/-/readiness');
    for (const path of ['/-/liveness', '/-/readiness']) expect(server, path).toContain(`app.get('${path}'`);
    for (const probe of [container.startupProbe, container.livenessProbe, container.readinessProbe]) expect(probe.httpGet.port).toBe(container.ports[0].name);
    // The pod listens only after waiting for PostgreSQL and migrating: the startup probe waits longer than that wait.
    const env = resolvedEnv(rendered);
    expect(container.startupProbe.periodSeconds * container.startupProbe.failureThreshold).toBeGreaterThan(Number(env.DATABASE_CONNECT_TIMEOUT_SECONDS));
  });

  it('migrates under the advisory lock at each pod\'s start, so it needs no migration Job', () => {
    const rendered = render(SCENARIOS.replicas);
    expect(rendered.manifests.filter((manifest) => manifest.object.kind === 'Job')).toEqual([]);
    expect(readFileSync(resolve(ROOT, 'src/service/db/migrate.ts'), 'utf8')).toContain('pg_advisory_xact_lock');
    expect(rendered.notes).toContain('advisory lock');
  });

  it('runs as the image\'s user, on a read-only root, writing only to its volumes', () => {
    const rendered = render();
    const pod = podOf(rendered);
    const container = containerOf(rendered);
    const image = finalStage(parseDockerfile(readFileSync(resolve(ROOT, 'Dockerfile.service'), 'utf8')));
    const uid = Number(/useradd --uid (\d+)/.exec(image.map((instruction) => instruction.args).join('\n'))![1]);
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: uid, seccompProfile: { type: 'RuntimeDefault' } });
    expect(container.securityContext).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
    const imageArtifacts = /ARTIFACTS_DIR=(\S+)/.exec(image.filter((instruction) => instruction.keyword === 'ENV').map((instruction) => instruction.args).join(' '))![1];
    expect(resolvedEnv(rendered).ARTIFACTS_DIR).toBe(imageArtifacts);
    const volumes = new Set((pod.volumes as { name: string }[]).map((volume) => volume.name));
    const mounted = (container.volumeMounts as { name: string; mountPath: string }[]).filter((mount) => volumes.has(mount.name)).map((mount) => mount.mountPath);
    expect(mounted).toEqual(expect.arrayContaining([imageArtifacts, '/tmp']));
    expect(container.args).toEqual(['service']);
    expect(pod.automountServiceAccountToken).toBe(false);
  });

  it('keeps artifacts where every replica sees them before it runs more than one', () => {
    expect(failure({ replicaCount: 2 })).toMatch(/artifacts\.persistence/);
    expect(failure({ autoscaling: { enabled: true } })).toMatch(/artifacts\.persistence/);
    const shared = render(SCENARIOS.replicas);
    expect(single(shared, 'PersistentVolumeClaim').spec.accessModes).toEqual(['ReadWriteMany']);
    expect(podOf(shared).volumes.find((volume: { name: string }) => volume.name === 'artifacts').persistentVolumeClaim.claimName).toBe(single(shared, 'PersistentVolumeClaim').metadata.name);
    const claimed = render(SCENARIOS.existingClaim);
    expect(objectsOf(claimed, 'PersistentVolumeClaim')).toEqual([]);
    expect(podOf(claimed).volumes.find((volume: { name: string }) => volume.name === 'artifacts').persistentVolumeClaim.claimName).toBe('artifacts');
    expect(single(render(SCENARIOS.noStorageClass), 'PersistentVolumeClaim').spec.storageClassName).toBe('');
    expect(single(render(SCENARIOS.storageClass), 'PersistentVolumeClaim').spec.storageClassName).toBe('nfs');
    expect(podOf(render()).volumes.find((volume: { name: string }) => volume.name === 'artifacts').emptyDir).toEqual({ sizeLimit: '5Gi' });
  });

  it('says what is missing or contradictory instead of rendering it', () => {
    expect(failure({ database: { url: '' } })).toMatch(/database\.url is required/);
    expect(failure({ existingSecret: 'mine' })).toMatch(/existingSecret is set/);
    expect(failure({ metrics: { tokenInExistingSecret: true } })).toMatch(/needs existingSecret/);
    expect(failure({ bootstrap: { privateLocation: 'cluster', privateLocationKey: LOCATION_KEY } })).toMatch(/needs bootstrap\.accountId/);
    expect(failure({ bootstrap: { accountId: ACCOUNT } })).toMatch(/needs bootstrap\.apiKey/);
    expect(failure({ bootstrap: { accountId: ACCOUNT, apiKey: BOOTSTRAP.apiKey, privateLocation: 'cluster' } })).toMatch(/needs bootstrap\.privateLocationKey/);
  });

  it('routes the Ingress to the Service\'s port, and links to its host', () => {
    const rendered = render(SCENARIOS.ingress);
    const service = single(rendered, 'Service');
    const path = single(rendered, 'Ingress').spec.rules[0].http.paths[0];
    expect(path.backend.service).toEqual({ name: service.metadata.name, port: { name: service.spec.ports[0].name } });
    expect(service.spec.ports[0].targetPort).toBe(containerOf(rendered).ports[0].name);
    expect(resolvedEnv(rendered).PUBLIC_URL).toBe('https://monitoring.example.com');
    expect(resolvedEnv(render({ ingress: { enabled: true } })).PUBLIC_URL).toBe('http://monitoring.example.com');
    expect(resolvedEnv(render(SCENARIOS.publicUrl)).PUBLIC_URL).toBe('https://status.example.org');
    expect(resolvedEnv(render()).PUBLIC_URL).toBeUndefined();
  });

  it('scales with an HPA on the Deployment, which then leaves the replica count to it, and keeps pods through disruptions', () => {
    const rendered = render(SCENARIOS.hpa);
    const deployment = single(rendered, 'Deployment');
    const hpa = single(rendered, 'HorizontalPodAutoscaler');
    expect(hpa.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: deployment.metadata.name });
    expect(deployment.spec.replicas).toBeUndefined();
    expect(hpa.spec.metrics.map((metric: { resource: { name: string } }) => metric.resource.name)).toEqual(['cpu', 'memory']);
    const pdb = single(rendered, 'PodDisruptionBudget');
    expect(pdb.spec.minAvailable).toBe('50%');
    expect(pdb.spec.selector.matchLabels).toEqual(deployment.spec.selector.matchLabels);
    expect(single(render(SCENARIOS.replicas), 'PodDisruptionBudget').spec.maxUnavailable).toBe(1);
    expect(single(render(SCENARIOS.replicas), 'Deployment').spec.replicas).toBe(3);
  });

  it('scrapes /metrics of the Service\'s pods with the token it keeps in its Secret', () => {
    const rendered = render(SCENARIOS.serviceMonitor);
    const monitor = single(rendered, 'ServiceMonitor');
    const service = single(rendered, 'Service');
    expect(monitor.metadata.namespace).toBe('prometheus');
    expect(monitor.metadata.labels.release).toBe('prometheus');
    expect(monitor.spec.namespaceSelector.matchNames).toEqual([RELEASE.namespace]);
    for (const [key, value] of Object.entries(monitor.spec.selector.matchLabels as Record<string, string>)) expect(service.metadata.labels[key], key).toBe(value);
    const [endpoint] = monitor.spec.endpoints;
    expect(endpoint).toMatchObject({ port: service.spec.ports[0].name, path: '/metrics' });
    expect(readFileSync(resolve(ROOT, 'src/service/routes/metrics.ts'), 'utf8')).toContain("'/metrics'");
    const secret = single(rendered, 'Secret');
    expect(Buffer.from(secret.data[endpoint.authorization.credentials.key], 'base64').toString()).toBe('metrics-token-0001-abcdef');
    expect(loadServiceConfig(resolvedEnv(rendered)).metricsToken?.reveal()).toBe('metrics-token-0001-abcdef');
    expect(single(render({ serviceMonitor: { enabled: true } }), 'ServiceMonitor').spec.endpoints[0].authorization).toBeUndefined();
  });
});
