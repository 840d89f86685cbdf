# Vigil operator image: the jar on a Java 17 runtime, run as the non-root UID 10001.
#   ./vigil --version && docker build -t <registry>/vigil-operator:0.1.0 .   # the launcher builds the jar
# BASE is any image with a Java 17 runtime whose `java` is on PATH (Eclipse Temurin's JRE by
# default; distroless java17 works too). deploy/image/build.sh builds this Dockerfile with podman on
# a local base with no shell (deploy/image/base.sh: a jlink'd runtime and the libraries it needs),
# which is what CI tests. No RUN step: the file builds on a base without a shell.
ARG BASE=eclipse-temurin:17-jre
FROM ${BASE}

WORKDIR /app
# Owned by root: the operator can read its jar but not change it.
COPY operator/target/vigil-operator.jar /app/vigil-operator.jar

# A fixed numeric non-root user, so Kubernetes can verify runAsNonRoot (the chart runs as 10001).
USER 10001:10001
# metrics, /healthz and /readyz; the outcome intake (POST /v1/namespaces/{ns}/backendpools/{name}/outcomes)
EXPOSE 8080 8443
ENTRYPOINT ["java", "-jar", "/app/vigil-operator.jar"]
CMD ["operator"]
