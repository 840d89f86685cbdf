package dev.vigil.publish;

/**
 * One port of a pool, resolved: the Service port's name, number and protocol, and the Pod port
 * number backends listen on.
 */
public record ServicePort(String name, int port, int targetPort, String protocol) {}
