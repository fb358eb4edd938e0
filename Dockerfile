# syntax=docker/dockerfile:1
# One image for every process: gateway (default), worker, simulator, migrate
# and doctor; the command picks one. The build stage bundles each entry point
# into dist/ (`npm run build`); the runtime stage ships dist/ with production
# dependencies only, so no tsx, TypeScript or test tooling is in the image.
# The commands are the ones CI runs (test/e2e/production-build.e2e.test.ts):
# `npm ci`, `npm run build`, and `npm ci --omit=dev` for what ships.

ARG NODE_IMAGE=node:24-bookworm-slim

# Only the dependency manifests, so the npm ci layers below are rebuilt when
# dependencies change rather than on every source edit. Found with find, so a
# new workspace needs no change here.
FROM ${NODE_IMAGE} AS manifests
WORKDIR /src
COPY . .
RUN mkdir /manifests \
 && cp package.json package-lock.json .npmrc /manifests/ \
 && find apps packages -mindepth 2 -maxdepth 2 -name package.json -exec cp --parents {} /manifests/ \;

FROM ${NODE_IMAGE} AS build
ENV NPM_CONFIG_UPDATE_NOTIFIER=false
WORKDIR /src
COPY --from=manifests /manifests/ ./
RUN npm ci
COPY . .
RUN npm run build

FROM ${NODE_IMAGE}
ENV NPM_CONFIG_UPDATE_NOTIFIER=false
WORKDIR /app
COPY --from=manifests /manifests/ ./
RUN npm ci --omit=dev && npm cache clean --force
COPY --from=build /src/dist ./dist
COPY migrations ./migrations
COPY apps/gateway/public ./apps/gateway/public
COPY scripts/run-entry.mjs ./scripts/run-entry.mjs

# Files stay root-owned, so the process cannot rewrite its own code.
USER node
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000
EXPOSE 3000
# node is PID 1's child (compose adds an init process, `init: true`), so
# SIGTERM reaches it directly for a graceful stop.
CMD ["node", "scripts/run-entry.mjs", "gateway"]
