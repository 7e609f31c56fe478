package lakehouse.server;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import javax.security.sasl.AuthenticationException;
import org.apache.hive.service.auth.PasswdAuthenticationProvider;

/**
 * The lakehouse server's JDBC/Thrift password check: one shared password, the environment
 * variable LAKEHOUSE_THRIFT_PASSWORD of the server process, for every user name. Without it
 * (unset or empty) every login is refused, so a server never runs open by mistake.
 *
 * HiveServer2 loads it with hive.server2.authentication=CUSTOM and
 * hive.server2.custom.authentication.class=lakehouse.server.PasswordAuthenticator; the class
 * name is read from a fresh HiveConf at each login, i.e. from a Java system property.
 */
public final class PasswordAuthenticator implements PasswdAuthenticationProvider {
    static final String PASSWORD_VARIABLE = "LAKEHOUSE_THRIFT_PASSWORD";

    @Override
    public void Authenticate(String user, String password) throws AuthenticationException {
        String expected = System.getenv(PASSWORD_VARIABLE);
        if (expected == null || expected.isEmpty()) {
            throw refused(user, PASSWORD_VARIABLE + " is not set in the server's environment,"
                    + " so no login is accepted");
        }
        if (!matches(expected, password)) {
            throw refused(user, "wrong password");
        }
    }

    /** Compares in time independent of where the two differ (the length may still show). */
    private static boolean matches(String expected, String given) {
        byte[] givenBytes = (given == null ? "" : given).getBytes(StandardCharsets.UTF_8);
        return MessageDigest.isEqual(expected.getBytes(StandardCharsets.UTF_8), givenBytes);
    }

    private static AuthenticationException refused(String user, String reason) {
        String name = user == null || user.isEmpty() ? "(no user name)" : "'" + user + "'";
        return new AuthenticationException(
                "lakehouse server: login of user " + name + " refused: " + reason);
    }
}
