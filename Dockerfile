# One image for every Esteira process; the command picks the service and the domains:
#   docker run esteira api | grpc | watcher | webhook | migrate | worker --domains signer,...

ARG PYTHON_IMAGE=python:3.11-slim-bookworm

# --- build: install the project and its dependencies into a relocatable virtualenv ---------
FROM ${PYTHON_IMAGE} AS build
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1
RUN python -m venv /opt/esteira
WORKDIR /src
# Dependencies first, so a code change doesn't reinstall them.
COPY pyproject.toml README.md ./
RUN mkdir -p shared services workflows activities \
    && touch shared/__init__.py services/__init__.py workflows/__init__.py \
             activities/__init__.py \
    && /opt/esteira/bin/pip install . \
    && /opt/esteira/bin/pip uninstall -y esteira
COPY shared ./shared
COPY services ./services
COPY workflows ./workflows
COPY activities ./activities
RUN /opt/esteira/bin/pip install --no-deps . \
    && /opt/esteira/bin/esteira --help >/dev/null

# --- runtime: the virtualenv, a non-root user, nothing else ---------------------------------
FROM ${PYTHON_IMAGE} AS runtime
ARG ESTEIRA_BUILD=container
ARG UID=10001
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
# REST API, gRPC, webhook gateway.
EXPOSE 8080 50051 8090
VOLUME ["/var/lib/esteira/data", "/var/log/esteira"]
# No HEALTHCHECK here: workers serve no HTTP; compose and Kubernetes probe per service.
ENTRYPOINT ["esteira"]
CMD ["api"]
