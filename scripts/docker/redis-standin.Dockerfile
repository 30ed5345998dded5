# Stand-in for redis:7.4-alpine, built by scripts/docker_env.sh only where that image cannot be
# pulled. Debian bookworm's redis-server (7.0) on the debootstrapped root; runs as the redis
# user; protected mode off (the compose network reaches it by name, as with the official image).
ARG BASE_IMAGE=mcb-standin/debian:bookworm
FROM ${BASE_IMAGE}
RUN apt-get update -qq \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends redis-server >/dev/null \
    && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin \
    && mkdir -p /data && chown redis:redis /data
COPY redis-entrypoint.sh /usr/local/bin/docker-entrypoint.sh
LABEL org.minecraft-builder-mcp.standin="redis:7.4-alpine"
USER redis
WORKDIR /data
EXPOSE 6379
ENTRYPOINT ["docker-entrypoint.sh"]
CMD ["redis-server"]
