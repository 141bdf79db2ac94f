# syntax=docker/dockerfile:1
# The full agent image: every check type, runtime 2026.04 bundled.
#   docker build -t outpost-agent .
# The migration image is this file with more runtimes:
#   docker build --build-arg RUNTIMES="2024.09 2025.04 2026.04" -t outpost-agent:migrate-202409-202604 .
#
# Script checks run isolated: each job in PID, mount, IPC and UTS namespaces of
# its own (bubblewrap, in an unprivileged user namespace; the agent stays the
# non-root user outpost). Docker's defaults refuse that: its seccomp profile
# blocks namespace creation and mount, its AppArmor profile blocks mount, and
# its masked /proc paths keep the sandbox from mounting a /proc of its own.
# Run the image with (from the repository's root):
#   docker run --security-opt seccomp=deploy/seccomp/outpost-agent.json \
#     --security-opt apparmor=unconfined --security-opt systempaths=unconfined \
#     --cap-add NET_RAW -e API_URL=… -e API_KEY=pl_… outpost-agent
# (seccomp=unconfined works too; the profile is Docker's default plus the calls
# bubblewrap needs.) Without these flags the agent starts, logs
# "script isolation: …" with why namespaces were refused, and refuses script
# checks (SANDBOX_UNAVAILABLE). docs/security.md has the details.

ARG NODE_IMAGE=node:24-bookworm-slim
ARG RUNTIMES="2026.04"

# Build: the TypeScript compiled with every dependency, then thrown away.
FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
RUN npm ci --no-audit --no-fund
COPY src ./src
# The dashboard's source: `npm run build` bundles it into dist/dashboard, which the service serves.
COPY web ./web
# The uptime agent's bundler: `npm run build` writes dist/agent-bundle with it.
COPY tools ./tools
RUN npm run build

# Runtimes, installed by the installer alone: dist/runtimes and dist/errors,
# which load no npm package. A change anywhere else in the source compiles to
# the same installer, so this stage, and the runtimes' layer of the image,
# stay cached; only runtimes/ or the installer itself reinstall them.
FROM ${NODE_IMAGE} AS runtimes
ARG RUNTIMES
WORKDIR /app
COPY package.json ./
COPY runtimes ./runtimes
COPY --from=build /src/dist/runtimes ./dist/runtimes
COPY --from=build /src/dist/errors ./dist/errors
RUN node dist/runtimes/install-command.js ${RUNTIMES}

# Run: production dependencies only.
FROM ${NODE_IMAGE}
ARG RUNTIMES
ARG VERSION=0.1.0
LABEL org.opencontainers.image.title="outpost-agent" \
      org.opencontainers.image.description="Private location agent for synthetic monitoring" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="Apache-2.0" \
      io.outpost.runtimes="${RUNTIMES}"

# tini: PID 1 that forwards signals and reaps the sandboxes' children.
# chromium: browsers for scripts; ffmpeg: the videos of browser checks;
# redis-server: the embedded queue;
# iputils-ping: ICMP monitors (needs NET_RAW: docker run --cap-add NET_RAW);
# bubblewrap: the namespaces script jobs run in; util-linux: prlimit, the
# jobs' limits, and setpriv, a fresh user per job when the agent runs as root.
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini chromium ffmpeg redis-server iputils-ping bubblewrap util-linux ca-certificates \
 && rm -rf /var/lib/apt/lists/*

# /app, the runtimes in it included, is built by root and stays root's: the
# agent's user and the scripts it runs may read it, never change it, so no
# script can plant code in a runtime that a later job or the agent loads.
# Production dependencies without the service's (deploy/service-only-packages.txt:
# its web framework, database drivers, mail, MQTT broker): the agent never loads them.
WORKDIR /app
COPY package.json package-lock.json deploy/service-only-packages.txt ./
RUN npm ci --omit=dev --no-audit --no-fund \
 && npm uninstall --no-save --omit=dev --no-audit --no-fund $(cat service-only-packages.txt) \
 && npm cache clean --force
# Before the compiled source, so that a source change rebuilds neither layer.
COPY --from=runtimes /app/runtimes ./runtimes
COPY --from=build /src/dist ./dist
# Nothing writable by group or others, whatever modes the build context had
# (touches only such files, so the layer stays small).
RUN find /app -perm /022 -exec chmod go-w {} +

# A user of its own; /tmp holds sandboxes and engines, writable on a read-only root.
RUN useradd --uid 10001 --user-group --home-dir /home/outpost --create-home outpost
USER outpost
ENV NODE_ENV=production \
    AGENT_HEALTH_PORT=8081 \
    CHROMIUM_PATH=/usr/bin/chromium \
    NODE_OPTIONS=--max-semi-space-size=2
EXPOSE 8081
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.AGENT_HEALTH_PORT||8081)+'/-/liveness').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# V8 settings NODE_OPTIONS refuses (src/agent/v8-tuning.ts), on the command line:
# Node.js 24 ignores --liftoff-only when the agent sets it once started.
ENTRYPOINT ["tini", "--", "node", "--heap-growing-percent=20", "--liftoff-only", "/app/dist/cli.js"]
CMD ["agent"]
