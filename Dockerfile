# ledger-bridge: the compiled service (dist/) on Node 20, run as the unprivileged `node` user, its
# data directory a volume. Every setting is an environment variable (README, "Configuration").
#
#   docker build -t ledger-bridge .
#   docker run -p 127.0.0.1:8080:8080 -v ledger-data:/data ledger-bridge     # embedded store, no demo
#   docker compose up --build                                                  # on PostgreSQL (compose.yaml)
#
# NODE_ENV=production turns the simulator off unless SIMULATOR=on is given: a production start creates
# no demo project. With SIMULATOR=on the banner names /data/demo.json for the demo's keys instead of
# printing them, unless the container has a terminal (`docker run -it`).
#
# NODE_IMAGE: any Debian-based image with Node >= 20.19 on PATH and a `node` user (uid 1000).
ARG NODE_IMAGE=node:20-bookworm-slim

# 1. Compile: all dependencies, the type-checked build (npm run build) into dist/.
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/build.mjs scripts/
COPY src src
RUN npm run build

# 2. The production dependencies alone (no install scripts: none of them needs one).
FROM ${NODE_IMAGE} AS production-dependencies
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force

# 3. The image: compiled code and production dependencies, owned by root and read-only to the service.
FROM ${NODE_IMAGE}
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    DATA_DIR=/data
WORKDIR /app
COPY --from=production-dependencies /app/node_modules node_modules
COPY --from=build /app/dist dist
COPY package.json ./
COPY bin bin
# The operator CLI on PATH: `docker exec <container> ledger-bridge projects create --name …`.
RUN ln -s /app/bin/ledger-bridge.mjs /usr/local/bin/ledger-bridge \
 && mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8080
# Healthy = /livez (the process serves HTTP) and /readyz (its store answers) both answer 200.
HEALTHCHECK --interval=10s --timeout=10s --start-period=60s --retries=3 CMD ["node", "bin/healthcheck.mjs"]
# SIGTERM: the service finishes held connector calls, releases its lease and exits 0.
STOPSIGNAL SIGTERM
CMD ["node", "--enable-source-maps", "dist/main.js"]
