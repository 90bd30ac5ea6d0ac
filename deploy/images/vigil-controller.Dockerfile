# The controller image: FROM scratch, assembled by deploy/images/build.sh (make images).
# Runs as 65532:65532 on a read-only root filesystem if the runtime asks for one; its only
# writable place is the volume at /var/lib/vigil (CA, keys, admin token, the SQLite database
# unless VIGIL_DATABASE_URL names PostgreSQL). Both listeners are on every interface of the
# container: 8640 the HTTP API and web page (plain HTTP: publish it on loopback or put TLS in
# front, or set VIGIL_HTTP_TLS=true), 8641 the agent gateway (mutual TLS).
FROM scratch
ARG VERSION
COPY rootfs/ /
COPY --chown=65532:65532 data/ /var/lib/vigil/
ENV VIGIL_DATA_DIR=/var/lib/vigil \
    VIGIL_HTTP_LISTEN=0.0.0.0:8640 \
    VIGIL_GRPC_LISTEN=0.0.0.0:8641 \
    VIGIL_AGENT_DIR=/usr/lib/vigil/agent
USER 65532:65532
WORKDIR /var/lib/vigil
VOLUME ["/var/lib/vigil"]
EXPOSE 8640 8641
# GET /readyz through the binary itself (no shell in the image).
HEALTHCHECK --interval=15s --timeout=6s --start-period=20s --retries=3 \
    CMD ["/usr/bin/vigil-controller", "ready", "--quiet"]
LABEL org.opencontainers.image.title="vigil-controller" \
      org.opencontainers.image.description="The Vigil controller: a safety-gated AI operator for self-hosted infrastructure" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="Apache-2.0"
ENTRYPOINT ["/usr/bin/vigil-controller"]
CMD ["serve"]
