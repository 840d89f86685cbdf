# The bundle image OLM's catalogs pull: the manifests and metadata, and the labels of
# metadata/annotations.yaml (OlmBundleTest keeps the two equal).
#   docker build -f deploy/olm/bundle.Dockerfile -t <registry>/vigil-operator-bundle:0.1.0 deploy/olm
FROM scratch
LABEL operators.operatorframework.io.bundle.mediatype.v1=registry+v1
LABEL operators.operatorframework.io.bundle.manifests.v1=manifests/
LABEL operators.operatorframework.io.bundle.metadata.v1=metadata/
LABEL operators.operatorframework.io.bundle.package.v1=vigil
LABEL operators.operatorframework.io.bundle.channels.v1=candidate-v0
LABEL operators.operatorframework.io.bundle.channel.default.v1=candidate-v0
COPY manifests /manifests/
COPY metadata /metadata/
