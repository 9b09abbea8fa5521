# One image for every Esteira process; the command picks the service and the domains:
#   docker run esteira api | grpc | watcher | webhook | migrate | worker --domains signer,...

ARG PYTHON_IMAGE=python:3.11-slim-bookworm

# --- build: install the project and its dependencies into a relocatable virtualenv ---------
FROM ${PYTHON_IMAGE} AS build
# The package index pip uses, when the build host names one (pip's own default otherwise).
ARG PIP_INDEX_URL
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1
# `python3`: the official image and Debian's own python (scripts/base-image.sh) both have it.
RUN python3 -m venv /opt/esteira
WORKDIR /src
# Pinned, hash-checked dependencies first (requirements.lock, `make lock`), so a code change
# doesn't reinstall them and two builds install the same programs.
COPY requirements.lock ./
RUN /opt/esteira/bin/pip install --require-hashes -r requirements.lock
COPY pyproject.toml README.md ./
COPY shared ./shared
COPY services ./services
COPY workflows ./workflows
COPY activities ./activities
RUN /opt/esteira/bin/pip install --no-deps . \
    && /opt/esteira/bin/pip check \
    && /opt/esteira/bin/esteira --help >/dev/null

# --- runtime: the virtualenv, a non-root user, the PDF previewer ---------------------------
FROM ${PYTHON_IMAGE} AS runtime
ARG ESTEIRA_BUILD=container
ARG UID=10001
# poppler-utils renders the first page of a PDF for the approver's page (`pdftoppm`).
RUN apt-get update \
    && apt-get install -y --no-install-recommends poppler-utils \
    && rm -rf /var/lib/apt/lists/*
RUN groupadd --system --gid ${UID} esteira \
    && useradd --system --uid ${UID} --gid esteira --home-dir /var/lib/esteira \
       --shell /usr/sbin/nologin esteira \
    && mkdir -p /var/lib/esteira/data /var/log/esteira \
    && chown -R esteira:esteira /var/lib/esteira /var/log/esteira
COPY --from=build /opt/esteira /opt/esteira
ENV PATH=/opt/esteira/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    ESTEIRA_BUILD=${ESTEIRA_BUILD} \
    ESTEIRA_ENVIRONMENT=Production \
    ESTEIRA_HOST=0.0.0.0 \
    ESTEIRA_DATA_DIR=/var/lib/esteira/data \
    ESTEIRA_LOGGING__DIRECTORY=/var/log/esteira
WORKDIR /var/lib/esteira
USER esteira:esteira
# REST API, gRPC, webhook gateway; every process's ops port (when ESTEIRA_PORTS__METRICS=9464).
EXPOSE 8080 50051 8090 9464
VOLUME ["/var/lib/esteira/data", "/var/log/esteira"]
# No HEALTHCHECK here: the ops port is off unless set; compose and Kubernetes probe per service.
ENTRYPOINT ["esteira"]
CMD ["api"]
