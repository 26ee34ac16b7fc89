# The stand-in model node and external provider (packages/stand-ins) for `docker compose up` and
# test/images: not part of the product. They listen on loopback only, so compose runs them in the
# network namespace of the inference-worker container, the one client that calls them.
#   docker build -f infra/docker/stand-ins.Dockerfile -t inference-gateway/stand-ins .
#   docker run inference-gateway/stand-ins node --port 9100

# The base: Node 24 (LTS) on Debian bookworm, pinned by digest (docs/deployment.md, "Images":
# where the digest came from and how to refresh it). The code supports Node >= 20.19 (the root
# package.json's engines); tests without a registry pass a local stand-in:
#   --build-arg NODE_IMAGE=localhost/gateway-node-base:test (test/images/base-image.sh).
ARG NODE_IMAGE=node:24-bookworm-slim@sha256:6f7b03f7c2c8e2e784dcf9295400527b9b1270fd37b7e9a7285cf83b6951452d

# ---- build: these instructions are the same in all five Dockerfiles (keep them identical):
# the first image built compiles the workspace once and the others reuse its layers ----
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

# ---- this image: `deploy --prod` gives the service with its production dependencies only
# (workspace packages injected with their dist/); sources and tooling are dropped ----
RUN pnpm --filter @gateway/stand-ins deploy --prod --offline /out \
 && rm -rf /out/src /out/bench /out/scripts /out/tsconfig.json /out/prisma.config.ts /out/Dockerfile \
    /out/pnpm-lock.yaml /out/pnpm-workspace.yaml

# ---- runtime: Node and the deployed service, nothing else ----
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app
# Owned by root and read-only for the service user: the root filesystem can be mounted read-only.
COPY --from=build /out ./
# The image's `node` user, numeric so that Kubernetes' runAsNonRoot can verify it.
USER 1000:1000
# `gateway-stand-in node|provider [flags]` (packages/stand-ins/README.md, CLI).
ENTRYPOINT ["node", "dist/cli.js"]
CMD ["node"]
