FROM node:20-slim

WORKDIR /app
ENV NODE_ENV=production

# Dependencies first, so the layer is reused until the lockfile changes; tsx runs the TypeScript directly.
COPY package.json package-lock.json ./
RUN npm ci --omit=dev && npm cache clean --force

COPY . .

USER node
EXPOSE 8000
# node directly (not npm) so SIGTERM reaches the server and it drains gracefully.
CMD ["node", "--import", "tsx", "src/main.ts"]
