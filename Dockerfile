# Two stages: TypeScript is compiled with the dev dependencies (typescript), and the image that
# runs keeps only the production dependencies and the compiled dist/ (no tsx, no compiler).
FROM node:20-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src src
COPY migrations migrations
RUN npm run build

FROM node:20-slim
WORKDIR /app
ENV NODE_ENV=production
# Dependencies first, so the layer is reused until the lockfile changes.
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist dist

USER node
EXPOSE 8000
# node directly (not npm) so SIGTERM reaches the server and it drains gracefully. The heap flags
# are `npm start`'s (test/smoke/start-command.test.ts keeps the two the same).
CMD ["node", "--max-old-space-size=128", "--max-semi-space-size=8", "dist/src/main.js"]
