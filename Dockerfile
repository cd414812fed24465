# sparseread-mcp in a container: streamable HTTP on port 8765 by default, stdio with `docker run -i`.
# HTTP needs a token, since the port is published beyond loopback; without one the server refuses to start:
#   docker run -e SPARSEREAD_TOKEN="$(openssl rand -hex 24)" -p 127.0.0.1:8765:8765 -v "$PWD":/workspace:ro IMAGE
#   (clients send Authorization: Bearer <token>); over stdio (any argument replaces the HTTP default):
#   docker run -i --rm -v "$PWD":/workspace:ro IMAGE --log-level WARNING
# Licences: the server is MIT; the image also holds the pdf extra, PyMuPDF, which is AGPL-3.0 (see docs/clients.md).
# The base is an argument so it can be swapped: docker build --build-arg PYTHON_IMAGE=python:3.12-slim .
# So are the extras: --build-arg EXTRAS=pdf,e5 adds E5 for questions in other words (a 91 MB wheel; amd64, arm64).
ARG PYTHON_IMAGE=python:3.11-slim

# Stage 1: the wheel, built from this checkout (the same artifact CI tests and uvx runs).
FROM ${PYTHON_IMAGE} AS wheel
WORKDIR /src
COPY pyproject.toml README.md LICENSE ./
COPY sparseread_mcp ./sparseread_mcp
COPY skills ./skills
RUN pip install --no-cache-dir "build>=1.2,<2" "hatchling>=1.25,<2" \
    && python -m build --wheel --no-isolation --outdir /dist .

# Stage 2: the server, installed from that wheel; no sources, no build tools.
FROM ${PYTHON_IMAGE}
ARG EXTRAS=pdf
LABEL org.opencontainers.image.title="sparseread-mcp" \
      org.opencontainers.image.licenses="MIT AND AGPL-3.0-only"

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    SPARSEREAD_CACHE_DIR=/home/reader/.cache/sparseread-mcp \
    SPARSEREAD_MAX_MEMORY_MB=2048

COPY --from=wheel /dist /tmp/dist
# The pdf extra brings PyMuPDF (AGPL-3.0: the image is distributed under its terms too); git lets pointers
# cite commits in mounted repositories.
RUN apt-get update \
    && apt-get install -y --no-install-recommends git \
    && rm -rf /var/lib/apt/lists/* \
    && wheel="$(find /tmp/dist -name 'sparseread_mcp-*.whl')" \
    && pip install --no-cache-dir "${wheel}[${EXTRAS}]" \
    && rm -rf /tmp/dist \
    && useradd --create-home --uid 10001 reader \
    && mkdir /workspace

# Mount what the agent may read at /workspace, read-only: docker run -v "$PWD":/workspace:ro ...
WORKDIR /workspace
USER 10001
VOLUME ["/workspace"]
EXPOSE 8765
# Probes /healthz only when the server serves HTTP (a stdio server is healthy while it runs).
HEALTHCHECK --interval=30s --timeout=5s --retries=3 \
    CMD ["python", "-m", "sparseread_mcp.serve.healthcheck"]

ENTRYPOINT ["sparseread-mcp", "--root", "/workspace"]
CMD ["--http", "--host", "0.0.0.0", "--port", "8765"]
