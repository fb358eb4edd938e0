# syntax=docker/dockerfile:1
# One image for every process: gateway (default), worker, simulator and the
# migrate step; the command picks one. Workspace packages ship as TypeScript
# source and run under tsx, so there is no build step and no dist/ to drift
# from src/.

# Only the dependency manifests, so the npm ci layer below is rebuilt when
# dependencies change rather than on every source edit. Found with find, so a
# new workspace needs no change here.
FROM node:20-bookworm-slim AS manifests
WORKDIR /src
COPY . .
RUN mkdir /manifests \
 && cp package.json package-lock.json .npmrc /manifests/ \
 && find apps packages -mindepth 2 -maxdepth 2 -name package.json -exec cp --parents {} /manifests/ \;

FROM node:20-bookworm-slim
ENV NPM_CONFIG_UPDATE_NOTIFIER=false \
    NPM_CONFIG_FUND=false
WORKDIR /app
COPY --from=manifests /manifests/ ./
# Dev dependencies are kept: tsx runs the processes.
RUN npm ci && npm cache clean --force
COPY . .

# Files stay root-owned, so the process cannot rewrite its own code.
USER node
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000
EXPOSE 3000
# npm forwards SIGTERM to the process for a graceful stop; compose adds an
# init process (init: true) to reap zombies.
CMD ["npm", "run", "start:gateway"]
