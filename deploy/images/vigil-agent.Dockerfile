# The agent image: FROM scratch, assembled by deploy/images/build.sh (make images). Meant for
# a Docker host (mount the engine's socket read-only: its containers become resources the
# controller can read) or a Kubernetes DaemonSet (deploy/kubernetes). The agent enrolls on
# first start with VIGIL_AGENT_JOIN_URL, VIGIL_AGENT_JOIN_CA_FINGERPRINT and VIGIL_AGENT_TOKEN
# and keeps its identity in the volume at /var/lib/vigil-agent. It runs as root because the
# engine's socket and the read sandbox (mount namespaces) need it; the image holds no other
# programs, so host reads find none unless the host's tools are mounted.
FROM scratch
ARG VERSION
COPY rootfs/ /
ENV VIGIL_AGENT_STATE_DIR=/var/lib/vigil-agent
VOLUME ["/var/lib/vigil-agent"]
LABEL org.opencontainers.image.title="vigil-agent" \
      org.opencontainers.image.description="The Vigil host agent" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="Apache-2.0"
ENTRYPOINT ["/usr/bin/vigil-agent"]
CMD ["run"]
