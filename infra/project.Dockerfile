# An image of a team's own LangGraph project, run by the packaged Runledger CLI (no Runledger
# sources in it). Build from the project directory, the one with langgraph.json and a
# package.json that depends on @runledger/cli and @runledger/runtime (see examples/booking-agent;
# file: tarballs must lie inside the build context):
#   docker build -f <runledger>/infra/project.Dockerfile -t my-agents .
# One image, three roles: `docker run my-agents producer` (default), `… worker`, `… migrate`.
# Or mount the project instead of baking it in: -v "$PWD":/project (after `npm ci` in it).
FROM node:20-bookworm-slim

WORKDIR /project
COPY package.json package-lock.json ./
# Runtime dependencies only; tsx (a dependency of the CLI) loads the TypeScript graphs.
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY . .

ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000
USER node
EXPOSE 3000

# Node itself is PID 1, so SIGTERM reaches it (producer: close; worker: drain).
ENTRYPOINT ["node", "node_modules/@runledger/cli/dist/main.mjs"]
CMD ["producer"]
