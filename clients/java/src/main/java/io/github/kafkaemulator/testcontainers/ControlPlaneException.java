package io.github.kafkaemulator.testcontainers;

/** The control plane refused a request: its HTTP status and its one-line reason. */
public class ControlPlaneException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final int status;

    public ControlPlaneException(int status, String message) {
        super("control plane answered " + status + ": " + message);
        this.status = status;
    }

    /** The HTTP status: 400 a malformed request, 404 an unknown broker, topic or route. */
    public int status() {
        return status;
    }
}
