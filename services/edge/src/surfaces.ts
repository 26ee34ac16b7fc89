/**
 * The parts of edge a process serves (`EDGE_SURFACES`). `api`: the public API (`/v1`, with its
 * document); `admin`: the operator API (`/admin/v1`); `dashboard`: the dashboard (`/dashboard/`
 * and `/dashboard/api`). Kubernetes runs the dashboard in its own pods: a process is the only
 * bulkhead that keeps a flood of dashboard requests (sign-ins need no credential) from queueing
 * ahead of `/v1` requests on one event loop. No framework here: the deployment tests read it.
 */
export const EDGE_SURFACES = ['api', 'admin', 'dashboard'] as const;
export type EdgeSurface = (typeof EDGE_SURFACES)[number];

/** The settings a surface needs, which may be empty where it is not served. */
export const SURFACE_SETTINGS: Readonly<Record<EdgeSurface, readonly string[]>> = {
  api: ['AMQP_URL'],
  admin: ['ADMIN_TOKEN'],
  dashboard: [],
};

/** `EDGE_SURFACES` as a set (its format is checked when the configuration loads). */
export function edgeSurfaces(setting: string): Set<EdgeSurface> {
  const named = setting.split(',').map((entry) => entry.trim());
  return new Set(EDGE_SURFACES.filter((surface) => named.includes(surface)));
}

/** The settings these surfaces need that `settings` leaves empty (edge stops at start on any). */
export function missingSurfaceSettings(
  surfaces: ReadonlySet<EdgeSurface>,
  settings: Readonly<Record<string, unknown>>,
): string[] {
  return [...surfaces].flatMap((surface) =>
    SURFACE_SETTINGS[surface].filter((key) => !settings[key]),
  );
}

/**
 * The configuration's cross-check (`loadConfig`): each setting the configured surfaces need but
 * the environment leaves empty, reported like a missing required setting.
 */
export function surfaceSettingProblems(values: Readonly<Record<string, unknown>>): string[] {
  const setting = String(values.EDGE_SURFACES ?? '');
  return missingSurfaceSettings(edgeSurfaces(setting), values).map(
    (key) => `${key}: is required with EDGE_SURFACES ${setting}`,
  );
}
