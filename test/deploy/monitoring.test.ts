import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { parse } from 'yaml';
import { workloads } from './support/k8s-env.js';
import { validateAgainstSchema } from './support/k8s-schemas.js';
import { buildKustomization, type Manifest } from './support/kustomize.js';
import {
  ALERTS_FILE,
  allPanels,
  alertExpressions,
  dashboardExpressions,
  readAlertRules,
  readDashboard,
} from './support/promql.js';

/*
 * Monitoring: the optional component k8s/components/monitoring (PodMonitor and
 * PrometheusRule for the Prometheus Operator) added to each overlay, validated against the
 * operator's published CRD schemas; the alerts keep the namespace and say when billing is not
 * scraped; the dashboard's data source is a variable and every query is filtered by namespace.
 */

const scratch = mkdtempSync(path.join(tmpdir(), 'k8s-monitoring-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The overlay with the component added, as an operator would write it. */
function withMonitoring(overlay: string): Manifest[] {
  const dir = mkdtempSync(path.join(scratch, `${overlay}-`));
  const relative = (to: string) => path.relative(dir, path.resolve(to));
  writeFileSync(
    path.join(dir, 'kustomization.yaml'),
    [
      'apiVersion: kustomize.config.k8s.io/v1beta1',
      'kind: Kustomization',
      // As when the component is added to the overlay itself: in the overlay's namespace.
      `namespace: ${(parse(readFileSync(`k8s/overlays/${overlay}/kustomization.yaml`, 'utf8')) as { namespace: string }).namespace}`,
      `resources: [${relative(`k8s/overlays/${overlay}`)}]`,
      `components: [${relative('k8s/components/monitoring')}]`,
    ].join('\n'),
  );
  return buildKustomization(dir);
}

type Selector = {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
};

function selects(selector: Selector, labels: Record<string, string>): boolean {
  const byLabel = Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
  const byExpression = (selector.matchExpressions ?? []).every(({ key, operator, values }) => {
    if (operator === 'In') return values!.includes(labels[key] ?? '');
    if (operator === 'NotIn') return !values!.includes(labels[key] ?? '');
    if (operator === 'Exists') return key in labels;
    return !(key in labels);
  });
  return byLabel && byExpression;
}

describe.each(['dev', 'prod'])('k8s %s with components/monitoring', (overlay) => {
  const manifests = withMonitoring(overlay);
  const monitor = manifests.find((m) => m.kind === 'PodMonitor')!;
  const rule = manifests.find((m) => m.kind === 'PrometheusRule')!;
  const spec = monitor.spec as {
    jobLabel: string;
    selector: Selector;
    namespaceSelector?: unknown;
    podMetricsEndpoints: { port: string; path: string }[];
  };

  it('validates every object, the operator CRDs included, against its published schema', () => {
    expect([monitor, rule].every(Boolean)).toBe(true);
    for (const manifest of manifests) expect(() => validateAgainstSchema(manifest)).not.toThrow();
    const namespace = manifests.find((m) => m.kind === 'Namespace')!.metadata.name;
    expect([monitor.metadata.namespace, rule.metadata.namespace]).toEqual([namespace, namespace]);
  });

  it("scrapes exactly the Deployments' pods, on their http port, as job inference-gateway", () => {
    expect(spec.namespaceSelector).toBeUndefined(); // its own namespace only
    const selected = workloads(manifests).filter((w) => selects(spec.selector, w.podLabels));
    expect(selected.map((w) => `${w.manifest.kind}/${w.manifest.metadata.name}`).sort()).toEqual(
      workloads(manifests)
        .filter((w) => w.manifest.kind === 'Deployment')
        .map((w) => `Deployment/${w.manifest.metadata.name}`)
        .sort(),
    );
    expect(spec.podMetricsEndpoints).toEqual([{ port: 'http', path: '/metrics', interval: '15s' }]);
    for (const { podSpec, podLabels } of selected) {
      expect(podSpec.containers[0]!.ports?.map((p) => p.name)).toContain('http');
      expect(podLabels[spec.jobLabel]).toBe('inference-gateway');
    }
  });

  it('carries the alert rules of infra/prometheus/alerts.yml, unchanged', () => {
    const file = parse(readFileSync(ALERTS_FILE, 'utf8')) as { groups: unknown };
    expect((rule.spec as { groups: unknown }).groups).toEqual(file.groups);
  });
});

describe('the operator schemas refuse what the operator would', () => {
  it('rejects a PodMonitor endpoint whose port is a number', () => {
    const [monitor] = withMonitoring('prod').filter((m) => m.kind === 'PodMonitor');
    const broken = structuredClone(monitor!);
    (broken.spec as { podMetricsEndpoints: { port: unknown }[] }).podMetricsEndpoints[0]!.port =
      8080;
    expect(() => validateAgainstSchema(broken)).toThrow(/port must be string/);
  });
});

/** `by (...)` label lists of an expression. */
const groupings = (expr: string) => [...expr.matchAll(/\bby\s*\(([^)]*)\)/g)].map((m) => m[1]!);

describe('alert rules', () => {
  const rules = readAlertRules().flatMap((group) => group.rules);

  it('keep the namespace in every aggregation (RabbitMQ: its vhost), never drop labels with without', () => {
    for (const { where, expr } of alertExpressions()) {
      expect([where, /\bwithout\s*\(/.test(expr)]).toEqual([where, false]);
      const label = /rabbitmq_/.test(expr) ? 'vhost' : 'namespace';
      for (const list of groupings(expr)) {
        expect([where, list.split(',').map((l) => l.trim())]).toEqual([
          where,
          expect.arrayContaining([label]),
        ]);
      }
    }
  });

  it('fire when a gateway target is down, billing is not scraped, or nothing is', () => {
    const exprOf = (name: string) => rules.find((r) => r.alert === name)?.expr.trim();
    expect(exprOf('GatewayTargetDown')).toBe('up{job="inference-gateway"} == 0');
    expect(exprOf('GatewayMetricsAbsent')).toBe('absent(up{job="inference-gateway"})');
    // Whatever LedgerInvariantViolated and HoldSweeperLagging read must be there.
    const missing = exprOf('BillingMetricsMissing')!;
    for (const alert of ['LedgerInvariantViolated', 'HoldSweeperLagging']) {
      const [metric] = /billing_\w+/.exec(exprOf(alert)!)!;
      expect(missing).toContain(`count by (namespace) (${metric})`);
    }
  });
});

describe('dashboard', () => {
  const dashboard = readDashboard() as ReturnType<typeof readDashboard> & {
    templating: { list: { name: string; type: string; query: unknown }[] };
  };

  it('takes its data source from a variable: no uid is written in', () => {
    const variables = dashboard.templating.list;
    expect(variables.find((v) => v.name === 'datasource')).toMatchObject({
      type: 'datasource',
      query: 'prometheus',
    });
    expect(variables.map((v) => v.name)).toEqual(['datasource', 'namespace', 'vhost']);
    for (const panel of allPanels(dashboard.panels).filter((p) => p.type !== 'row')) {
      expect([panel.title, panel.datasource]).toEqual([
        panel.title,
        { type: 'prometheus', uid: '${datasource}' },
      ]);
    }
    const uids = [...JSON.stringify(dashboard).matchAll(/"uid":"([^"]*)"/g)].map((m) => m[1]);
    expect(new Set(uids)).toEqual(new Set(['inference-gateway', '${datasource}']));
  });

  it("filters every gateway series by the chosen namespace (RabbitMQ's by vhost)", () => {
    for (const { where, expr } of dashboardExpressions()) {
      for (const [, name, matchers] of expr.matchAll(/([a-zA-Z_:][\w:]*)\{([^}]*)\}/g)) {
        const wanted = name!.startsWith('rabbitmq_') ? 'vhost=~"$vhost"' : 'namespace="$namespace"';
        expect([where, name, matchers]).toEqual([where, name, expect.stringContaining(wanted)]);
      }
      // No series without a selector.
      const bare = expr.replace(/\{[^}]*\}/g, '{}').match(/\b[a-z]+_[a-z_]+(?=[^\w{(]|$)/g) ?? [];
      expect([where, bare]).toEqual([where, []]);
    }
  });
});
