# Stand-in for python:3.11-slim, built by scripts/docker_env.sh only where that image cannot be
# pulled (a machine without a container registry). Base: a debootstrapped Debian bookworm root
# (mcb-standin/debian:bookworm), so Python is Debian's 3.11. Made to look like the official
# image where our Dockerfiles rely on it: python/python3/python3.11 and pip on /usr/local/bin,
# pip allowed to install into the system (the official image has no EXTERNALLY-MANAGED marker),
# ca-certificates present, groupadd/useradd available.
ARG BASE_IMAGE=mcb-standin/debian:bookworm
FROM ${BASE_IMAGE}
RUN apt-get update -qq \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
       python3 python3-pip ca-certificates >/dev/null \
    && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin \
    && rm -f /usr/lib/python3.11/EXTERNALLY-MANAGED \
    && for n in python python3 python3.11; do ln -sf /usr/bin/python3.11 /usr/local/bin/$n; done \
    && ln -sf /usr/bin/pip3 /usr/local/bin/pip
LABEL org.minecraft-builder-mcp.standin="python:3.11-slim"
ENV LANG=C.UTF-8
CMD ["python3"]
