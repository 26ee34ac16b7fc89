/** The table `pnpm bench` prints: figures side by side, the issue's targets in the last column. */

const fmt = (value, digits = 1) =>
  value === undefined || Number.isNaN(value)
    ? '—'
    : value.toLocaleString('en-US', {
        maximumFractionDigits: digits,
        minimumFractionDigits: digits > 1 ? 0 : undefined,
      });
const ms = (value) =>
  value === undefined || Number.isNaN(value)
    ? '—'
    : value >= 100
      ? `${fmt(value, 0)} ms`
      : `${fmt(value, 1)} ms`;
const cpu = (value) =>
  value === undefined || Number.isNaN(value) ? '—' : `${value.toFixed(2)} ms`;
/** CPU per request of a gateway target's services, PostgreSQL and RabbitMQ together. */
function countedMs({ cpuMsPerRequestTotal, cpuMsPerRequest: { postgres = 0, rabbitmq = 0 } }) {
  return cpuMsPerRequestTotal + postgres + rabbitmq;
}
/** The gateway's services plus PostgreSQL and RabbitMQ, and that as a multiple of Portkey's. */
function allCounted(gateway, portkey) {
  if (!gateway?.cpuMsPerRequest) return '—';
  const total = countedMs(gateway);
  const ratio = portkey?.cpuMsPerRequestTotal
    ? ` (${(total / portkey.cpuMsPerRequestTotal).toFixed(1)}×)`
    : '';
  return `${cpu(total)}${ratio}`;
}
/** How many requests failed ('—' for a target that did not run). */
const errorCount = (result) =>
  result ? Object.values(result.errors).reduce((a, b) => a + b, 0) : '—';
const mb = (bytes) => (bytes === undefined ? '—' : `${fmt(bytes / 1e6, 0)} MB`);

function render(rows) {
  const widths = rows[0].map((_, col) => Math.max(...rows.map((row) => String(row[col]).length)));
  const line = (row) =>
    `| ${row.map((cell, col) => String(cell).padEnd(widths[col])).join(' | ')} |`;
  return [
    line(rows[0]),
    `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`,
    ...rows.slice(1).map(line),
  ].join('\n');
}

/** A count per request: two decimals, two significant digits below 0.01 (rare calls show). */
const each = (value) =>
  value === undefined || Number.isNaN(value)
    ? '—'
    : value > 0 && value < 0.01
      ? value.toPrecision(2)
      : value.toFixed(2);
const routes = (perRoute) =>
  Object.entries(perRoute ?? {})
    .map(([route, perRequest]) => `${route} ${each(perRequest)}`)
    .join(', ');
const sum = (values) => values.reduce((a, b) => a + b, 0);

/**
 * The gateway's components' counters per answered request (counters/gateway.mjs); the other
 * targets have none ('—').
 */
function counterRows(phase, gateway) {
  const c = gateway?.counters;
  const gatewayOnly = (label, cell) => [`  ${phase}: ${label}`, '—', '—', c ? cell(c) : '—', ''];
  const calls = (c, caller) => {
    const perRoute = c.billingCallsPerRequest[caller];
    return perRoute ? `${each(sum(Object.values(perRoute)))} (${routes(perRoute)})` : each(0);
  };
  const rows = [
    gatewayOnly(
      'PostgreSQL transactions / statements per request',
      (c) => `${each(c.postgresTransactionsPerRequest)} / ${each(c.postgresStatementsPerRequest)}`,
    ),
    gatewayOnly('RabbitMQ published / delivered / acked / confirmed', (c) => {
      const m = c.rabbitmqMessagesPerRequest;
      return [m.published, m.delivered, m.acknowledged, m.confirmed].map(each).join(' / ');
    }),
    gatewayOnly('edge → billing calls per request', (c) => calls(c, 'edge')),
    gatewayOnly('worker → billing calls per request', (c) => calls(c, 'worker')),
  ];
  if (c?.billingCallsPerRequest['edge or worker']) {
    rows.push(gatewayOnly('edge or worker → billing', (c) => calls(c, 'edge or worker')));
  }
  return rows;
}

/** BENCH_KEY_BUDGET / BENCH_KEY_LIMITS, named in the closed loop's row when they are on. */
function keyedSetting({ keyBudget, keyLimits }) {
  const on = [keyBudget && 'key budget', keyLimits && 'per-key limits'].filter(Boolean);
  return on.length === 0 ? '' : `${on.join(' and ')} on every request, `;
}

function closedRows({ closed }, settings) {
  if (!closed) return [];
  const { direct, portkey, gateway } = closed;
  const ratio =
    gateway && portkey ? ` (${fmt(gateway.reqPerS / portkey.reqPerS, 2)}× Portkey)` : '';
  const services = gateway
    ? Object.entries(gateway.cpuMsPerRequest).filter(
        ([name]) => !['postgres', 'rabbitmq'].includes(name),
      )
    : [];
  return [
    [
      `closed loop, ${settings.connections} connections, ` +
        `${settings.closedSliceSeconds ?? settings.closedSeconds} s slices in turn, ` +
        `admissions ${settings.admissions ?? 'api'}, ` +
        `holds ended via ${settings.holdEnds ?? 'api'}, jobs via ${settings.jobs ?? 'queue'}, ` +
        keyedSetting(settings) +
        `${settings.malloc ?? 'default'} allocator: req/s`,
      fmt(direct?.reqPerS, 0),
      fmt(portkey?.reqPerS, 0),
      `${fmt(gateway?.reqPerS, 0)}${ratio}`,
      '≥ 0.5× Portkey',
    ],
    [
      'closed loop: p50 / p99',
      `${ms(direct?.p50Ms)} / ${ms(direct?.p99Ms)}`,
      `${ms(portkey?.p50Ms)} / ${ms(portkey?.p99Ms)}`,
      `${ms(gateway?.p50Ms)} / ${ms(gateway?.p99Ms)}`,
      '',
    ],
    ['closed loop: errors', errorCount(direct), errorCount(portkey), errorCount(gateway), ''],
    [
      'CPU per request, own processes',
      '—',
      cpu(portkey?.cpuMsPerRequestTotal),
      `${cpu(gateway?.cpuMsPerRequestTotal)} (${services.map(([name, v]) => `${name} ${v.toFixed(2)}`).join(', ')})`,
      '≤ 1.5× Portkey (four services)',
    ],
    [
      '  of which outside main threads (V8 compiler, GC helpers; near 0 once warm)',
      '',
      cpu(portkey?.backgroundCpuMsPerRequest),
      cpu(gateway?.backgroundCpuMsPerRequest),
      '',
    ],
    [
      '  PostgreSQL / RabbitMQ per request',
      '',
      '',
      gateway
        ? `${cpu(gateway.cpuMsPerRequest.postgres)} / ${cpu(gateway.cpuMsPerRequest.rabbitmq)}`
        : '—',
      '',
    ],
    [
      '  all counted (services, PostgreSQL, RabbitMQ)',
      '',
      cpu(portkey?.cpuMsPerRequestTotal),
      allCounted(gateway, portkey),
      '≤ 2.5× Portkey',
    ],
    ...counterRows('closed', gateway),
    ...keyedRows(gateway, closed['gateway-keyed']),
  ];
}

const change = (keyed, plain) =>
  `${keyed >= plain ? '+' : '−'}${fmt(Math.abs(keyed / plain - 1) * 100, 0)} %`;

/** The gateway-keyed target beside the plain gateway, from slices taken in turn. */
function keyedRows(plain, keyed) {
  if (!plain || !keyed) return [];
  const figures = [
    ['req/s', (r) => r.reqPerS, (v) => fmt(v, 0)],
    ['own CPU', (r) => r.cpuMsPerRequestTotal, cpu],
    ['PostgreSQL', (r) => r.cpuMsPerRequest.postgres, cpu],
    ['counted', countedMs, cpu],
  ];
  return [
    [
      'closed loop, key budget and per-key limits on every request (another account, in turn with the plain key)',
      '',
      '',
      figures
        .map(([name, of, show]) => `${name} ${show(of(keyed))} (${change(of(keyed), of(plain))})`)
        .join(', '),
      'within 10 % of the plain key',
    ],
  ];
}

function openRows({ open }, settings) {
  if (!open) return [];
  const { direct, portkey, gateway } = open;
  const added = (r) =>
    r && direct
      ? `+${ms(r.p50Ms - direct.p50Ms)} / +${ms(r.p90Ms - direct.p90Ms)} / +${ms(r.p99Ms - direct.p99Ms)}`
      : '—';
  const cell = (r) => (r ? `${ms(r.p50Ms)} / ${ms(r.p90Ms)} / ${ms(r.p99Ms)}` : '—');
  return [
    [
      `open loop ${settings.openRate} req/s × ${settings.openSeconds} s ` +
        `(${settings.openSliceSeconds ?? settings.openSeconds} s slices in turn, ` +
        `after ${settings.openWarmupSeconds} s unmeasured): p50 / p90 / p99`,
      cell(direct),
      cell(portkey),
      cell(gateway),
      '',
    ],
    [
      '  added over direct',
      '',
      added(portkey),
      added(gateway),
      'p50 ≤ +3 ms, p99 ≤ +15 ms (200/s)',
    ],
    [
      '  errors (most in flight)',
      `${errorCount(direct)} (${direct?.maxInFlight ?? '—'})`,
      `${errorCount(portkey)} (${portkey?.maxInFlight ?? '—'})`,
      `${errorCount(gateway)} (${gateway?.maxInFlight ?? '—'})`,
      'no errors',
    ],
    ...(open['gateway-keyed']
      ? [['  key budget and per-key limits: added', '', '', added(open['gateway-keyed']), '']]
      : []),
    ...counterRows('open', gateway),
  ];
}

function streamRows({ stream }, settings) {
  if (!stream) return [];
  const { direct, portkey, gateway } = stream;
  const expected = (settings.streamChunks - 1) * settings.streamGapMs;
  // Relayed as they arrive: the content events reach the client spread out like the upstream
  // sent them, not bunched into one read at the end.
  const relayed = (r) =>
    r
      ? `${r.contentSpreadP50Ms >= expected / 2 ? 'yes' : 'NO'} (spread ${ms(r.contentSpreadP50Ms)})`
      : '—';
  const first = (r) =>
    r
      ? `${ms(r.firstByteP50Ms)}${direct && r !== direct ? ` (+${ms(r.firstByteP50Ms - direct.firstByteP50Ms)})` : ''}`
      : '—';
  return [
    ['streaming: first byte p50', first(direct), first(portkey), first(gateway), 'added ≤ 5 ms'],
    [
      `  ${settings.streamChunks} chunks ${settings.streamGapMs} ms apart relayed as they come`,
      relayed(direct),
      relayed(portkey),
      relayed(gateway),
      `yes (sent over ${expected} ms)`,
    ],
    ['  errors', errorCount(direct), errorCount(portkey), errorCount(gateway), ''],
  ];
}

function otherRows(results) {
  const rows = [];
  if (results.memory) {
    const services =
      Object.entries(results.memory.gateway ?? {})
        .map(([name, bytes]) => `${name} ${mb(bytes)}`)
        .join(', ') || '—';
    rows.push([
      'resident memory after the run',
      '',
      mb(results.memory.portkey?.portkey),
      services,
      '≤ 120 MB per service',
    ]);
  }
  if (results.heap) {
    const heaps = Object.entries(results.heap)
      .filter(([, heap]) => heap)
      .map(([name, heap]) => `${name} ${mb(heap.usedBytes)} / ${mb(heap.totalBytes)}`)
      .join(', ');
    rows.push(['  of which V8 heap: in use / reserved', '', '', heaps || '—', '']);
  }
  if (results.ledger) {
    const { accounts16: many, account1: one, batched16, batched1 } = results.ledger;
    const runs = [many, one, batched16, batched1].filter(Boolean);
    const ok = runs.every((run) => run.invariantsOk) ? 'clean' : 'VIOLATED';
    rows.push([
      'ledger hold+settle/s: 16 accounts / one',
      '',
      '',
      `${fmt(many.perSecond, 0)} / ${fmt(one.perSecond, 0)} (invariants ${ok})`,
      '≥ 10,000 / ≥ 3,000',
    ]);
    if (batched16 && batched1) {
      rows.push([
        '  batched admissions, 256 in flight: 16 accounts / one',
        '',
        '',
        `${fmt(batched16.perSecond, 0)} / ${fmt(batched1.perSecond, 0)}`,
        '≥ 10,000 / ≥ 3,000',
      ]);
    }
  }
  if (results.webhooks) {
    const w = results.webhooks;
    rows.push([
      'webhooks: deliveries/s, draining a backlog (HTTPS)',
      '',
      '',
      `${fmt(w.deliveriesPerS, 0)} (backlog ${w.backlogDelivered}; ${w.delivered}/${w.accepted} delivered)`,
      '≥ 500',
    ]);
    rows.push([
      `  first attempt after completion p50 (tick ${fmt(w.tickMs / 1000, 0)} s)`,
      '',
      '',
      ms(w.firstAttemptAfterCompletion.p50Ms),
      '< 100 ms',
    ]);
  }
  return rows;
}

/** BENCH_CPU_PROF=1: each service's heaviest functions, a list under the table. */
export function renderProfiles(profiles) {
  if (!profiles) return '';
  const lines = ['Heaviest functions by self time (% of the process busy time, whole run):'];
  for (const [service, { busyMs, functions }] of Object.entries(profiles)) {
    lines.push(`- ${service} (busy ${fmt(busyMs / 1000, 2)} s):`);
    for (const f of functions)
      lines.push(`    ${f.busyPercent.toFixed(1).padStart(5)}%  ${f.name}`);
  }
  return lines.join('\n');
}

/**
 * BENCH_SQL_PROFILE=1: where PostgreSQL's time went, per loop of the gateway: the heaviest
 * statements (nested ones marked; a statement's time includes the statements and triggers it
 * ran) and the functions by self time.
 */
export function renderSqlProfile(results) {
  const lines = [];
  for (const phase of ['closed', 'open']) {
    const profile = results[phase]?.gateway?.counters?.sqlProfile;
    if (!profile) continue;
    lines.push(
      `PostgreSQL, ${phase} loop, heaviest statements (per request: calls; per call: plans, planning + execution ms):`,
    );
    for (const s of profile.statements) {
      lines.push(
        `  ${fmt(s.callsPerRequest, 2).padStart(6)}  ${fmt(s.plansPerCall, 2).padStart(5)}  ${s.planMsPerCall.toFixed(3)} + ${s.execMsPerCall.toFixed(3)} ms  ${s.query}`,
      );
    }
    lines.push(`PostgreSQL, ${phase} loop, functions by self time (per request: calls, self ms):`);
    for (const f of profile.functions) {
      lines.push(
        `  ${fmt(f.callsPerRequest, 2).padStart(6)}  ${f.selfMsPerRequest.toFixed(3).padStart(7)} ms  ${f.name}`,
      );
    }
  }
  return lines.join('\n');
}

/** How the counter rows were counted. */
export const COUNTER_FOOTNOTE = [
  'Counters per answered request, gateway only, read around the measured interval:',
  'PostgreSQL transactions from pg_stat_database (billing and dispatcher databases; read 11 s',
  'after the run, once every backend published its counts, so background work of those 11 s is',
  'in), statements (one round trip each, BEGIN/COMMIT included) from pg_stat_statements (the',
  'statements of triggers deferred to a commit count as top-level ones, without a round trip);',
  "RabbitMQ from the broker's global counters (rabbitmqctl eval); billing calls from its",
  'billing_http_request_duration_seconds counts by route, the caller being the one service the',
  "route allows. With gateway-keyed, the closed loop's counters are per request of both keys.",
].join('\n');

export function renderTable(results, settings) {
  const header = [
    '',
    'direct to upstream',
    `Portkey ${settings.portkeyVersion}`,
    'this gateway',
    'target',
  ];
  return render([
    header,
    ...closedRows(results, settings),
    ...openRows(results, settings),
    ...streamRows(results, settings),
    ...otherRows(results),
  ]);
}
