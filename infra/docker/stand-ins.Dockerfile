# syntax=docker/dockerfile:1
# The stand-in model node and external provider (packages/stand-ins) for `docker compose up`:
# not part of the product. They listen on loopback only, so compose runs them in the network
# namespace of the inference-worker container, the one client that calls them.
#   docker build -f infra/docker/stand-ins.Dockerfile -t inference-gateway/stand-ins .
#   docker run inference-gateway/stand-ins node --port 9100

ARG NODE_IMAGE=node:20-bookworm-slim

FROM ${NODE_IMAGE} AS build
ENV CI=true
RUN npm install --global --no-fund --no-audit pnpm@12.21.0
WORKDIR /repo
COPY pnpm-lock.yaml pnpm-workspace.yaml ./
RUN pnpm fetch
COPY . .
RUN pnpm install --offline --frozen-lockfile
RUN pnpm exec tsc -b packages/stand-ins
RUN pnpm --filter @gateway/stand-ins deploy --prod --offline /out \
 && rm -rf /out/src /out/tsconfig.json

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /out ./
USER 1000:1000
# `gateway-stand-in node|provider [flags]` (packages/stand-ins/README.md, CLI).
ENTRYPOINT ["node", "dist/cli.js"]
CMD ["node"]
