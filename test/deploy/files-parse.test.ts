import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { parseAllDocuments } from 'yaml';
import {
  ALERTS_FILE,
  alertExpressions,
  allPanels,
  dashboardExpressions,
  metricNamesIn,
  readAlertRules,
  readDashboard,
} from './support/promql.js';

/*
 * Every YAML file of the repository parses (duplicate keys are errors, as for kubectl), the
 * JSON under infra/ parses, and the dashboard and alert rules are well formed. Whether their
 * metrics exist is checked against the running services in compose-stack.integration.test.ts.
 */

const SKIPPED_DIRS = new Set(['node_modules', 'dist', '.git', '.data', '.tmp', 'coverage']);

function filesUnder(dir: string, pattern: RegExp): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return SKIPPED_DIRS.has(entry.name) ? [] : filesUnder(full, pattern);
    return pattern.test(entry.name) ? [full] : [];
  });
}

const yamlFiles = filesUnder('.', /\.ya?ml$/);

describe('YAML and JSON files', () => {
  it('finds the deployment files among them', () => {
    for (const expected of [
      'docker-compose.yml',
      'k8s/base/kustomization.yaml',
      'k8s/base/edge-dashboard.yaml',
      'k8s/overlays/dev/kustomization.yaml',
      'k8s/overlays/prod/kustomization.yaml',
      ALERTS_FILE,
      'infra/prometheus/prometheus.yml',
    ]) {
      expect(yamlFiles).toContain(path.normalize(expected));
    }
  });

  it.each(yamlFiles)('%s parses', (file) => {
    const documents = parseAllDocuments(readFileSync(file, 'utf8'), {
      merge: true,
      uniqueKeys: true,
    });
    for (const document of Array.isArray(documents) ? documents : [documents]) {
      expect(document.errors.map((e) => e.message)).toEqual([]);
    }
  });

  it.each(filesUnder('infra', /\.json$/))('%s parses', (file) => {
    expect(() => JSON.parse(readFileSync(file, 'utf8'))).not.toThrow();
  });
});

/** Brackets, braces, parentheses and quotes balance (what a typo in PromQL usually breaks). */
function balanced(expr: string): boolean {
  const closing: Record<string, string> = { '(': ')', '[': ']', '{': '}' };
  const stack: string[] = [];
  let quote: string | null = null;
  for (let i = 0; i < expr.length; i += 1) {
    const c = expr[i]!;
    if (quote) {
      if (c === '\\') i += 1;
      else if (c === quote) quote = null;
    } else if (c === '"' || c === "'") quote = c;
    else if (closing[c]) stack.push(closing[c]);
    else if (')]}'.includes(c) && stack.pop() !== c) return false;
  }
  return stack.length === 0 && quote === null;
}

describe('the Grafana dashboard', () => {
  const dashboard = readDashboard();
  const panels = allPanels(dashboard.panels);

  it('has the panels the operators asked for', () => {
    const titles = panels.map((p) => p.title);
    for (const title of [
      'Request rate by route',
      'Latency percentiles',
      'Error responses by status',
      'Queue depth',
      'Holds open',
      'Settled in range (DZD)',
      'Webhook attempts by outcome',
    ]) {
      expect(titles).toContain(title);
    }
  });

  it('has unique panel ids, a query on every panel and a grid within 24 columns', () => {
    const ids = panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const panel of panels) {
      expect(panel.gridPos!.x + panel.gridPos!.w).toBeLessThanOrEqual(24);
      if (panel.type !== 'row') expect(panel.targets?.length).toBeGreaterThan(0);
    }
    expect(dashboard.uid).toBe('inference-gateway');
  });

  it.each(dashboardExpressions().map((e) => [e.where, e.expr]))('%s is sound', (_where, expr) => {
    expect(balanced(expr)).toBe(true);
    expect(metricNamesIn(expr).length).toBeGreaterThan(0);
  });
});

describe('the alert rules', () => {
  const rules = readAlertRules().flatMap((group) => group.rules);

  it('cover error ratio, p99 latency, queue backlog, webhook failures, invariants, sweeper lag', () => {
    const expressions = rules.map((r) => r.expr).join('\n');
    expect(expressions).toMatch(/edge_http_request_duration_seconds_count\{status=~"5\.\."/);
    expect(expressions).toMatch(/histogram_quantile\(0\.99,/);
    expect(expressions).toContain('rabbitmq_queue_messages_ready');
    expect(expressions).toContain('dispatcher_webhook_attempts_total');
    expect(expressions).toContain('billing_ledger_invariant_violations');
    expect(expressions).toContain('billing_hold_sweeper_lag_seconds');
  });

  it.each(rules)('$alert is a complete rule', (rule) => {
    expect(rule.alert).toMatch(/^[A-Z][A-Za-z0-9]+$/);
    expect(balanced(rule.expr)).toBe(true);
    if (rule.for !== undefined) expect(rule.for).toMatch(/^\d+[smh]$/);
    expect(['page', 'ticket']).toContain(rule.labels?.severity);
    expect(rule.annotations?.summary).toBeTruthy();
    expect(rule.annotations?.description).toBeTruthy();
  });

  it('have unique names', () => {
    const names = alertExpressions().map((e) => e.where);
    expect(new Set(names).size).toBe(names.length);
  });
});

describe('metricNamesIn', () => {
  it('finds series names, not functions, labels, durations or numbers', () => {
    expect(
      metricNamesIn(
        'histogram_quantile(0.99, sum by (le, route) (rate(edge_http_request_duration_seconds_bucket{route!~"/(healthz|readyz)", status=~"5.."}[$__rate_interval]))) > 1e6',
      ),
    ).toEqual(['edge_http_request_duration_seconds_bucket']);
    expect(metricNamesIn('sum(increase(a_total[$__range])) / on (x) group_left b * 3600')).toEqual([
      'a_total',
      'b',
    ]);
  });
});
