# Vigil operator image. Build the jar first, then the image:
#   mvn -B package && docker build -t vigil-operator:0.1.0 .
# Not built in CI: no container engine runs there.
FROM eclipse-temurin:17-jre

# A fixed numeric non-root user, so Kubernetes can verify runAsNonRoot (the chart runs as 10001).
RUN groupadd --system --gid 10001 vigil \
 && useradd --system --uid 10001 --gid vigil --home-dir /app --no-create-home \
      --shell /usr/sbin/nologin vigil

WORKDIR /app
# Owned by root: the operator can read its jar but not change it.
COPY operator/target/vigil-operator.jar /app/vigil-operator.jar

USER 10001:10001
# metrics, /healthz and /readyz; the outcome intake (POST /v1/outcomes)
EXPOSE 8080 8443
ENTRYPOINT ["java", "-jar", "/app/vigil-operator.jar"]
CMD ["operator"]
