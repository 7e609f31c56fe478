import org.apache.hadoop.hive.conf.HiveConf;
import org.apache.hadoop.hive.metastore.txn.TxnDbUtil;

/**
 * Creates the Hive metastore's transaction and lock tables (HIVE_LOCKS, NEXT_LOCK_ID, ...) in a
 * metastore database, as Hive's schematool does for a real metastore. Iceberg's Hive commit
 * lock needs them; Spark's own metastore client never creates them.
 *
 * Usage: java -cp "pyspark/jars/*:<jdbc driver jar>" HiveLockTables.java <jdbc url> <driver class>
 */
public class HiveLockTables {
    public static void main(String[] args) throws Exception {
        HiveConf conf = new HiveConf();
        conf.setVar(HiveConf.ConfVars.METASTORECONNECTURLKEY, args[0]);
        conf.setVar(HiveConf.ConfVars.METASTORE_CONNECTION_DRIVER, args[1]);
        TxnDbUtil.prepDb(conf);
    }
}
