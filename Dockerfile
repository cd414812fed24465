# sparseread-mcp in a container: streamable HTTP on port 8765 by default, stdio with `docker run -i`.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    SPARSEREAD_CACHE_DIR=/home/reader/.cache/sparseread-mcp

WORKDIR /app
COPY pyproject.toml README.md LICENSE ./
COPY sparseread_mcp ./sparseread_mcp
# The pdf extra brings PyMuPDF (AGPL-3.0); git lets pointers cite commits in mounted repositories.
RUN apt-get update \
    && apt-get install -y --no-install-recommends git \
    && rm -rf /var/lib/apt/lists/* \
    && pip install --no-cache-dir ".[pdf]" \
    && useradd --create-home --uid 10001 reader \
    && mkdir /data && chown reader /data

USER 10001
VOLUME ["/data"]
EXPOSE 8765
HEALTHCHECK --interval=30s --timeout=5s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8765/healthz', timeout=4)"]

# Binds all interfaces inside the container; the Host and Origin checks still allow only loopback names,
# so publish the port on the host's loopback: docker run -p 127.0.0.1:8765:8765 -v "$PWD":/data ...
ENTRYPOINT ["sparseread-mcp", "--root", "/data"]
CMD ["--http", "--host", "0.0.0.0", "--port", "8765"]
