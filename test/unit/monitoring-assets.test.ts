/**
 * The Grafana dashboard and Prometheus rules under deploy/: promtool accepts
 * the rules, the dashboard is a well-formed dashboard, and every metric either
 * queries is one the service or an agent exports.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { AgentMetrics } from '../../src/agent/metrics.js';
import { Readiness } from '../../src/agent/readiness.js';
import type { Queryable } from '../../src/service/db/database.js';
import { ServiceMetrics } from '../../src/service/service-metrics.js';

const ROOT = resolve(import.meta.dirname, '../..');
const DASHBOARD = resolve(ROOT, 'deploy/grafana/outpost-dashboard.json');
const RULES = resolve(ROOT, 'deploy/prometheus/outpost-rules.yml');

/** Every series name the agent (per-check series on) and the service export; nothing is collected. */
function exportedNames(): Set<string> {
  const agent = new AgentMetrics({ perCheck: true, readiness: new Readiness() });
  const service = new ServiceMetrics({ db: { query: () => Promise.reject(new Error('not collected')) } as Queryable });
  const names = new Set<string>();
  for (const metric of [...agent.registry.getMetricsAsArray(), ...service.registry.getMetricsAsArray()]) {
    const { name, type } = metric as unknown as { name: string; type: string };
    names.add(name);
    if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(name + suffix);
    if (type === 'summary') for (const suffix of ['_sum', '_count']) names.add(name + suffix);
  }
  return names;
}

const KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'and', 'or', 'unless', 'offset', 'inf', 'nan']);

/**
 * The metric names a PromQL expression (or a Grafana label_values() variable
 * query) reads: what is left once Grafana variables, strings, label matchers,
 * ranges, grouping clauses and function names are taken out.
 */
function metricNames(expression: string): string[] {
  const labelValues = /^\s*label_values\((.*),\s*\w+\s*\)\s*$/s.exec(expression);
  const text = (labelValues ? labelValues[1]! : expression)
    .replace(/\$\{[^}]*\}|\$\w+/g, '')
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const names: string[] = [];
  for (const match of text.matchAll(/(?<![\w.:])[a-zA-Z_:][\w:]*(?!\w)(\s*\()?/g)) {
    const [whole, call] = match;
    const name = whole.replace(/\s*\($/, '');
    if (call || KEYWORDS.has(name.toLowerCase())) continue;
    names.push(name);
  }
  return names;
}

describe('metricNames', () => {
  it('finds the metrics of an expression and nothing else', () => {
    expect(
      metricNames(
        'histogram_quantile(0.95, sum by (le, route) (rate(outpost_service_http_request_duration_seconds_bucket{route!="/x", a=~"$b"}[$__rate_interval]))) / on (instance) group_left () max(up) > 1e3',
      ),
    ).toEqual(['outpost_service_http_request_duration_seconds_bucket', 'up']);
    expect(metricNames('label_values(outpost_check_status{location=~"$location"}, check_name)')).toEqual(['outpost_check_status']);
    expect(metricNames('count(min by (check_id) (outpost_check_status) == 0) or vector(0)')).toEqual(['outpost_check_status']);
  });
});

describe('the Grafana dashboard', () => {
  const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as {
    uid: string;
    title: string;
    schemaVersion: number;
    templating: { list: { name: string; type: string; query: unknown; datasource?: { uid: string } }[] };
    panels: {
      id: number;
      type: string;
      title: string;
      gridPos: { x: number; y: number; w: number; h: number };
      datasource?: { type: string; uid: string };
      targets?: { refId: string; expr: string; datasource?: { uid: string } }[];
    }[];
  };
  const variables = dashboard.templating.list;
  const panels = dashboard.panels.filter((panel) => panel.type !== 'row');
  const queries = [
    ...panels.flatMap((panel) => (panel.targets ?? []).map((target) => ({ where: panel.title, expr: target.expr }))),
    ...variables
      .filter((variable) => variable.type === 'query')
      .map((variable) => ({ where: `$${variable.name}`, expr: (variable.query as { query: string }).query })),
  ];

  it('is a dashboard Grafana imports: a uid, panels with unique ids inside the 24-column grid, each with queries', () => {
    expect(dashboard.uid).toMatch(/^[\w-]{1,40}$/);
    expect(dashboard.title).toBeTruthy();
    expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(36);
    const ids = dashboard.panels.map((panel) => panel.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const panel of panels) {
      expect(panel.gridPos.x + panel.gridPos.w, panel.title).toBeLessThanOrEqual(24);
      expect(panel.gridPos.h, panel.title).toBeGreaterThan(0);
      expect(panel.targets?.length, panel.title).toBeGreaterThan(0);
      const refIds = panel.targets!.map((target) => target.refId);
      expect(new Set(refIds).size, panel.title).toBe(refIds.length);
    }
  });

  it('reads from the Prometheus the user picks, never one of ours', () => {
    expect(variables.find((variable) => variable.name === 'datasource')).toMatchObject({ type: 'datasource', query: 'prometheus' });
    for (const panel of panels) {
      expect(panel.datasource?.uid, panel.title).toBe('${datasource}');
      for (const target of panel.targets!) expect(target.datasource?.uid, panel.title).toBe('${datasource}');
    }
    for (const variable of variables.filter((candidate) => candidate.type === 'query')) expect(variable.datasource?.uid).toBe('${datasource}');
  });

  it('has queries promtool parses, its variables filled in', async () => {
    // As recording rules, each query is parsed by Prometheus's own parser.
    const rules = queries.map(({ expr }, index) => ({
      record: `outpost:dashboard_query_${index}`,
      expr: expr
        .replace(/^label_values\((.*),\s*\w+\)$/s, '$1')
        .replaceAll('$__rate_interval', '5m')
        .replace(/\$\{?\w+\}?/g, '.*'),
    }));
    const directory = await mkdtemp(join(tmpdir(), 'outpost-dashboard-'));
    try {
      const file = join(directory, 'queries.yml');
      await writeFile(file, JSON.stringify({ groups: [{ name: 'dashboard', rules }] }));
      const checked = spawnSync('promtool', ['check', 'rules', file], { encoding: 'utf8' });
      expect(checked.stderr).toBe('');
      expect(checked.status).toBe(0);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });

  it('queries only metrics the service or the agents export, and graphs the per-check ones', () => {
    const exported = exportedNames();
    const used = new Set<string>();
    for (const { where, expr } of queries) {
      const names = metricNames(expr);
      expect(names.length, `${where}: ${expr}`).toBeGreaterThan(0);
      for (const name of names) {
        expect(exported.has(name), `${where}: ${name} is not exported`).toBe(true);
        used.add(name);
      }
    }
    for (const name of ['outpost_check_status', 'outpost_check_results_total', 'outpost_check_response_time_seconds_bucket', 'probe_success', 'probe_http_duration_seconds', 'outpost_service_http_requests_total', 'outpost_service_scheduler_tick_duration_seconds_bucket', 'process_resident_memory_bytes']) {
      expect(used, name).toContain(name);
    }
  });
});

describe('the Prometheus rules', () => {
  it('pass promtool check rules', () => {
    const checked = spawnSync('promtool', ['check', 'rules', RULES], { encoding: 'utf8' });
    expect(checked.stderr).toBe('');
    expect(checked.stdout).toMatch(/SUCCESS: \d+ rules found/);
    expect(checked.status).toBe(0);
  });

  it('alert on the failures operators asked for, reading only metrics the service or the agents export', () => {
    const rules = (parse(readFileSync(RULES, 'utf8')) as { groups: { rules: { alert: string; expr: string }[] }[] }).groups.flatMap(
      (group) => group.rules,
    );
    const exported = exportedNames();
    for (const rule of rules) {
      const names = metricNames(rule.expr);
      expect(names.length, rule.alert).toBeGreaterThan(0);
      for (const name of names) expect(exported.has(name), `${rule.alert}: ${name} is not exported`).toBe(true);
    }
    expect(rules.map((rule) => rule.alert)).toEqual(
      expect.arrayContaining([
        'OutpostAgentNotReady',
        'OutpostServiceUnreachableFromAgent',
        'OutpostCheckFailing',
        'OutpostQueueBackingUp',
        'OutpostSandboxIsolationNone',
        'OutpostDatabaseUnreachable',
      ]),
    );
  });
});
