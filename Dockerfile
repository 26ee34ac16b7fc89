# Every image of the gateway, one target each, built from the repository root (the workspace is
# the build context):
#   docker build --target edge -t inference-gateway/edge .
# Targets: billing, dispatcher, inference-worker, edge (the four services) and stand-ins (the
# stand-in model node and external provider for compose and test/images, not part of the
# product). Name the target: without --target the last stage, edge, is built.
# The base: Node 24 (LTS) on Debian bookworm, pinned by digest (docs/deployment.md, "Images":
# where the digest came from and how to refresh it). The code supports Node >= 20.19 (the root
# package.json's engines); tests without a registry pass a local stand-in:
#   --build-arg NODE_IMAGE=localhost/gateway-node-base:test (test/images/base-image.sh).
ARG NODE_IMAGE=node:24-bookworm-slim@sha256:6f7b03f7c2c8e2e784dcf9295400527b9b1270fd37b7e9a7285cf83b6951452d

# ---- build: compiles the workspace once for every target; the first image built does the work
# and the others reuse its layers ----
FROM ${NODE_IMAGE} AS build
ENV CI=true CHECKPOINT_DISABLE=1 PRISMA_HIDE_UPDATE_MESSAGE=1
RUN npm install --global --no-fund --no-audit pnpm@12.21.0
WORKDIR /repo
# Packages are fetched from the lockfile alone, so this layer is reused until the lockfile changes.
COPY pnpm-lock.yaml pnpm-workspace.yaml ./
RUN pnpm fetch
COPY . .
RUN pnpm install --offline --frozen-lockfile
# Billing's Prisma client is generated from prisma/schema.prisma (no database needed), then
# every image's projects are compiled in one `tsc -b`.
RUN pnpm --filter @gateway/billing run generate \
 && pnpm exec tsc -b services/billing services/dispatcher services/edge services/inference-worker packages/stand-ins
# Each target's `pnpm --filter <package> deploy --prod --offline /out` gives its package with its
# production dependencies only (workspace packages injected with their dist/); then
# `cd /out && rm -rf $DEPLOY_DROP` drops the sources and tooling deploy copies along.
ENV DEPLOY_DROP="src bench scripts tsconfig.json prisma.config.ts pnpm-lock.yaml pnpm-workspace.yaml"

# ---- runtime: what every image is: Node and one deployed package (COPY'd to /app by each
# target below, owned by root and read-only for the service user, so the root filesystem can be
# mounted read-only), nothing else ----
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
# glibc's allocator: two arenas, and free memory above 1 MiB at the heap's top given back to the
# system (ADR 0071). Measured under the bench: billing 128-143 -> 106-115 MB resident, edge 20 to
# 36 MB less, no CPU cost seen. The bench runs the services with these lines (infra/bench).
ENV MALLOC_ARENA_MAX=2 MALLOC_TRIM_THRESHOLD_=1048576
WORKDIR /app
# The image's `node` user, numeric so that Kubernetes' runAsNonRoot can verify it.
USER 1000:1000
# Exec form: Node is PID 1 and receives SIGTERM itself (the service drains and exits within 10 s).
ENTRYPOINT ["node", "dist/main.js"]

# ---- stand-ins: `gateway-stand-in node|provider [flags]` (packages/stand-ins/README.md, CLI);
#   docker run inference-gateway/stand-ins node --port 9100
# They listen on loopback only: compose runs them in the inference-worker container's network
# namespace, the one client that calls them. ----
FROM build AS stand-ins-deploy
RUN pnpm --filter @gateway/stand-ins deploy --prod --offline /out && cd /out && rm -rf $DEPLOY_DROP

FROM runtime AS stand-ins
COPY --from=stand-ins-deploy /out ./
ENTRYPOINT ["node", "dist/cli.js"]
CMD ["node"]

# ---- billing: accounts, keys, scoped tokens, the catalog and the ledger. The same image applies
# the migrations (prisma/migrations): `node dist/db/migrate-cli.js`. ----
FROM build AS billing-deploy
RUN pnpm --filter @gateway/billing deploy --prod --offline /out && cd /out && rm -rf $DEPLOY_DROP
# Runtime dependencies only: the Prisma CLI (`prisma`, with `effect` and the rest of its tree) is
# linked as an optional peer of @prisma/client but only generates the client, at build time; of
# the client's runtime, the generated client loads `runtime/client` and PostgreSQL's query
# compiler alone (engineType "client": no Rust engine, no other database). Running the image
# (test/images) checks that nothing removed is needed.
RUN node infra/docker/prune-deploy.mjs /out prisma \
 && find /out/node_modules/.pnpm/@prisma+client@*/node_modules/@prisma/client/runtime -type f \
      \( -name '*.map' -o -name 'query_engine_bg.*' -o -name '*sqlite*' -o -name '*mysql*' \
         -o -name '*sqlserver*' -o -name '*cockroachdb*' -o -name 'binary.*' -o -name 'library.*' \
         -o -name 'edge*' -o -name 'wasm-*' -o -name 'react-native.*' \) -delete

FROM runtime AS billing
ENV HOST=0.0.0.0 PORT=8081
COPY --from=billing-deploy /out ./
EXPOSE 8081

# ---- dispatcher: signed webhook deliveries with retries. Its SQL migrations (migrations/) are
# applied by `node dist/db/migrate-cli.js` (compose's dispatcher-migrate one-shot) before the
# service starts. ----
FROM build AS dispatcher-deploy
RUN pnpm --filter @gateway/dispatcher deploy --prod --offline /out && cd /out && rm -rf $DEPLOY_DROP

FROM runtime AS dispatcher
ENV HOST=0.0.0.0 PORT=8083
COPY --from=dispatcher-deploy /out ./
EXPOSE 8083

# ---- inference-worker: runs jobs on model nodes and the external provider ----
FROM build AS inference-worker-deploy
RUN pnpm --filter @gateway/inference-worker deploy --prod --offline /out && cd /out && rm -rf $DEPLOY_DROP

FROM runtime AS inference-worker
ENV HOST=0.0.0.0 PORT=8082
COPY --from=inference-worker-deploy /out ./
EXPOSE 8082

# ---- edge: the public API (/v1), the operator API (/admin/v1) and the dashboard (/dashboard/) ----
FROM build AS edge-deploy
RUN pnpm --filter @gateway/edge deploy --prod --offline /out && cd /out && rm -rf $DEPLOY_DROP
# The dashboard's static files (Vite build), served by edge from DASHBOARD_DIR.
RUN pnpm --filter @gateway/dashboard run build \
 && cp -r apps/dashboard/dist /out/dashboard

FROM runtime AS edge
ENV HOST=0.0.0.0 PORT=8080 DASHBOARD_DIR=/app/dashboard
COPY --from=edge-deploy /out ./
EXPOSE 8080
