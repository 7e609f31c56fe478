package lakehouse.storage;

import io.delta.storage.HadoopFileSystemLogStore;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Iterator;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;
import java.util.regex.Pattern;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * A Delta log store for object storage shared by writers in different processes: the
 * mutual exclusion S3's plain PUT does not give comes from a row in the PostgreSQL metastore
 * database (the table {@code lakehouse_delta_commits}, made by {@code lakehouse metastore
 * init}).
 *
 * <p>A commit N of a table: (1) fail if N.json exists; (2) make sure N-1.json is in the log
 * (recover it if its row says it is not yet); (3) write the actions to a temporary object
 * {@code _delta_log/.tmp/N.json.<uuid>}; (4) insert the row (table, N.json, temporary object,
 * incomplete): the primary key lets one writer win, the others get
 * FileAlreadyExistsException, which Delta treats as a concurrent commit (it checks for conflicts
 * and tries the next version); (5) copy the temporary object to N.json; (6) mark the row
 * complete. A writer killed after (4) leaves an incomplete row: the next reader or writer of the
 * table copies its temporary object into place. This is the protocol of Delta's own
 * external-store log stores (S3DynamoDBLogStore), with PostgreSQL as the store.
 *
 * <p>The database and login are the metastore's ({@code javax.jdo.option.Connection*} in the
 * Hadoop configuration). Complete rows are removed after a day, when only N.json's existence
 * is needed to refuse a second commit N; a temporary object is removed once its commit is in
 * place.
 */
public final class PostgresLogStore extends HadoopFileSystemLogStore {
    static final String TABLE = "lakehouse_delta_commits";
    private static final long EXPIRY_SECONDS = 24L * 60 * 60;
    private static final Pattern COMMIT = Pattern.compile("\\d{20}\\.json");
    private static final ConcurrentHashMap<String, ReentrantLock> LOCKS = new ConcurrentHashMap<>();

    private final String url;
    private final Properties login = new Properties();

    public PostgresLogStore(Configuration hadoopConf) {
        super(hadoopConf);
        url = hadoopConf.get("javax.jdo.option.ConnectionURL", "");
        if (!url.startsWith("jdbc:postgresql:")) {
            throw new IllegalArgumentException(
                "lakehouse.storage.PostgresLogStore needs the PostgreSQL metastore "
                    + "(LAKEHOUSE_METASTORE_URL=jdbc:postgresql://...), not " + url);
        }
        String user = hadoopConf.get("javax.jdo.option.ConnectionUserName");
        String password = hadoopConf.get("javax.jdo.option.ConnectionPassword");
        if (user != null) {
            login.setProperty("user", user);
        }
        if (password != null) {
            login.setProperty("password", password);
        }
    }

    /** One commit row. */
    record Entry(String table, String file, String temp, boolean complete) {
        Path target() {
            return new Path(new Path(table, "_delta_log"), file);
        }

        Path tempPath() {
            return new Path(new Path(table, "_delta_log"), temp);
        }
    }

    @Override
    public Iterator<FileStatus> listFrom(Path path, Configuration hadoopConf) throws IOException {
        FileSystem fs = path.getFileSystem(hadoopConf);
        Path resolved = plain(fs.makeQualified(path));
        if ("_delta_log".equals(resolved.getParent().getName())) {
            Entry latest = latest(resolved.getParent().getParent().toString());
            if (latest != null && !latest.complete()) {
                recover(fs, latest);
            }
        }
        return super.listFrom(path, hadoopConf);
    }

    @Override
    public void write(Path path, Iterator<String> actions, Boolean overwrite, Configuration conf)
            throws IOException {
        FileSystem fs = path.getFileSystem(conf);
        Path resolved = plain(fs.makeQualified(path));
        ReentrantLock lock = lockOf(resolved);
        try {
            lock.lockInterruptibly();
        } catch (InterruptedException e) {
            throw new InterruptedIOException(e.getMessage());
        }
        try {
            if (overwrite || !COMMIT.matcher(resolved.getName()).matches()) {
                writeObject(fs, resolved, actions, overwrite);
                return;
            }
            if (fs.exists(resolved)) {
                throw new FileAlreadyExistsException(resolved.toString());
            }
            String table = resolved.getParent().getParent().toString();
            long version = Long.parseLong(resolved.getName().substring(0, 20));
            if (version > 0) {
                requirePrevious(fs, table, version - 1);
            }
            Entry existing = find(table, resolved.getName());
            if (existing != null) {
                if (!existing.complete()) {
                    recover(fs, existing);
                }
                if (fs.exists(resolved)) {
                    throw new FileAlreadyExistsException(resolved.toString());
                }
                delete(existing); // a dropped table's row: its N.json is gone with its folder
            }
            String temp = ".tmp/" + resolved.getName() + "." + UUID.randomUUID();
            Entry entry = new Entry(table, resolved.getName(), temp, false);
            writeObject(fs, entry.tempPath(), actions, true);
            try {
                insert(entry);
            } catch (FileAlreadyExistsException e) { // another writer has commit N
                fs.delete(entry.tempPath(), false);
                throw e;
            }
            try {
                copy(fs, entry.tempPath(), entry.target());
                markComplete(entry);
                fs.delete(entry.tempPath(), false);
            } catch (IOException | RuntimeException e) {
                // committed: the row holds it, and the next reader copies it into place
            }
        } finally {
            lock.unlock();
        }
    }

    @Override
    public Boolean isPartialWriteVisible(Path path, Configuration hadoopConf) {
        return false;
    }

    private void requirePrevious(FileSystem fs, String table, long previous) throws IOException {
        String name = String.format("%020d.json", previous);
        Entry entry = find(table, name);
        if (entry != null && !entry.complete()) {
            recover(fs, entry);
        } else if (!fs.exists(new Path(new Path(table, "_delta_log"), name))) {
            throw new java.nio.file.FileSystemException(
                String.format("previous commit %s/_delta_log/%s does not exist", table, name));
        }
    }

    private void recover(FileSystem fs, Entry entry) throws IOException {
        ReentrantLock lock = lockOf(entry.target());
        lock.lock();
        try {
            if (!fs.exists(entry.target())) {
                try {
                    copy(fs, entry.tempPath(), entry.target());
                } catch (FileAlreadyExistsException e) {
                    // another process put it in place first
                } catch (FileNotFoundException e) {
                    // The temporary object is removed only once the entry is in place (by its
                    // writer, or another process recovering it meanwhile), or with the table's
                    // folder: without the entry, the row is a dropped table's.
                    if (!fs.exists(entry.target())) {
                        delete(entry);
                        return;
                    }
                }
            }
            markComplete(entry);
            fs.delete(entry.tempPath(), false);
        } finally {
            lock.unlock();
        }
    }

    private static ReentrantLock lockOf(Path path) {
        return LOCKS.computeIfAbsent(path.toString(), key -> new ReentrantLock());
    }

    private static void writeObject(
            FileSystem fs, Path path, Iterator<String> actions, boolean overwrite)
            throws IOException {
        if (!overwrite && fs.exists(path)) {
            throw new FileAlreadyExistsException(path.toString());
        }
        try (OutputStream out = fs.create(path, overwrite)) {
            while (actions.hasNext()) {
                out.write((actions.next() + "\n").getBytes(StandardCharsets.UTF_8));
            }
        }
    }

    private static void copy(FileSystem fs, Path source, Path target) throws IOException {
        try (InputStream in = fs.open(source)) {
            OutputStream out;
            try {
                out = fs.create(target, false);
            } catch (org.apache.hadoop.fs.FileAlreadyExistsException e) {
                throw new FileAlreadyExistsException(target.toString());
            }
            in.transferTo(out);
            out.close(); // not closed on failure: a partial object must not appear
        }
    }

    private static Path plain(Path path) {
        URI uri = path.toUri();
        try {
            return new Path(new URI(uri.getScheme(), null, uri.getHost(), uri.getPort(),
                uri.getPath(), uri.getQuery(), uri.getFragment()));
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException(e);
        }
    }

    private Connection connection() throws IOException {
        try {
            return DriverManager.getConnection(url, login);
        } catch (SQLException e) {
            throw new IOException("the Delta commit store in " + url.split("\\?")[0]
                + " cannot be reached: " + e.getMessage(), e);
        }
    }

    private void insert(Entry entry) throws IOException {
        String sql = "insert into " + TABLE
            + " (table_path, file_name, temp_path, complete) values (?, ?, ?, false)";
        try {
            update(sql, entry.table(), entry.file(), entry.temp());
        } catch (SQLException e) {
            if ("23505".equals(e.getSQLState())) { // unique_violation: another writer has it
                throw new FileAlreadyExistsException(entry.target().toString());
            }
            throw new IOException("recording the Delta commit " + entry.target() + " failed: "
                + e.getMessage(), e);
        }
    }

    /** Runs one statement with these string parameters. */
    private void update(String sql, String... values) throws IOException, SQLException {
        try (Connection db = connection(); PreparedStatement statement = db.prepareStatement(sql)) {
            for (int i = 0; i < values.length; i++) {
                statement.setString(i + 1, values[i]);
            }
            statement.executeUpdate();
        }
    }

    private void markComplete(Entry entry) throws IOException {
        long now = System.currentTimeMillis() / 1000;
        String done = "update " + TABLE + " set complete = true, expire_time = ?"
            + " where table_path = ? and file_name = ?";
        String expired = "delete from " + TABLE
            + " where table_path = ? and complete and expire_time < ?";
        try (Connection db = connection();
                PreparedStatement update = db.prepareStatement(done);
                PreparedStatement delete = db.prepareStatement(expired)) {
            update.setLong(1, now + EXPIRY_SECONDS);
            update.setString(2, entry.table());
            update.setString(3, entry.file());
            update.executeUpdate();
            delete.setString(1, entry.table());
            delete.setLong(2, now);
            delete.executeUpdate();
        } catch (SQLException e) {
            throw new IOException("completing the Delta commit " + entry.target() + " failed: "
                + e.getMessage(), e);
        }
    }

    /** Removes this row only (by its temporary object's unique name), not a newer one. */
    private void delete(Entry entry) throws IOException {
        String sql = "delete from " + TABLE
            + " where table_path = ? and file_name = ? and temp_path = ?";
        try {
            update(sql, entry.table(), entry.file(), entry.temp());
        } catch (SQLException e) {
            throw new IOException("removing a stale Delta commit row of " + entry.table()
                + " failed: " + e.getMessage(), e);
        }
    }

    private Entry find(String table, String file) throws IOException {
        return one("select table_path, file_name, temp_path, complete from " + TABLE
            + " where table_path = ? and file_name = ?", table, file);
    }

    private Entry latest(String table) throws IOException {
        return one("select table_path, file_name, temp_path, complete from " + TABLE
            + " where table_path = ? order by file_name desc limit 1", table);
    }

    private Entry one(String sql, String... values) throws IOException {
        try (Connection db = connection(); PreparedStatement statement = db.prepareStatement(sql)) {
            for (int i = 0; i < values.length; i++) {
                statement.setString(i + 1, values[i]);
            }
            try (ResultSet rows = statement.executeQuery()) {
                if (!rows.next()) {
                    return null;
                }
                return new Entry(rows.getString(1), rows.getString(2), rows.getString(3),
                    rows.getBoolean(4));
            }
        } catch (SQLException e) {
            throw new IOException("reading the Delta commit store failed: " + e.getMessage(), e);
        }
    }
}
