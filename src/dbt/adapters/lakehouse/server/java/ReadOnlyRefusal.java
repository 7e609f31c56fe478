package lakehouse.server;

import java.io.PrintStream;
import java.io.PrintWriter;
import org.apache.hive.service.cli.HiveSQLException;

/**
 * A JDBC/Thrift session's write, refused: one line for the client, no Java stack.
 *
 * HiveServer2 answers a statement that failed in the background (every Hive JDBC client, beeline
 * included, runs statements that way) with the failure's whole printed stack trace as its error
 * message: about 105 lines in beeline for a refused DROP TABLE. Spark's Thrift server passes a
 * HiveSQLException through unwrapped, so this one prints as its message alone: beeline shows
 * {@code Error: lakehouse server: DROP TABLE (DropTable) is a write; ... (state=25006,code=0)}.
 * SQLSTATE 25006 is SQL's "read-only SQL-transaction".
 */
final class ReadOnlyRefusal extends HiveSQLException {
    private static final long serialVersionUID = 1L;
    static final String SQL_STATE = "25006";

    ReadOnlyRefusal(String message) {
        super(message, SQL_STATE, 0);
    }

    /** No stack to record (nor to be given by Spark): the message is all a client can act on. */
    @Override
    public synchronized Throwable fillInStackTrace() {
        return this;
    }

    @Override
    public void setStackTrace(StackTraceElement[] stackTrace) {}

    @Override
    public String toString() {
        return getMessage();
    }

    @Override
    public void printStackTrace(PrintStream stream) {
        stream.println(this);
    }

    @Override
    public void printStackTrace(PrintWriter writer) {
        writer.println(this);
    }
}
