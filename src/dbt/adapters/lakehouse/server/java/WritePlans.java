package lakehouse.server;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import org.apache.spark.sql.catalyst.analysis.UnresolvedFunction;
import org.apache.spark.sql.catalyst.analysis.UnresolvedRelation;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.SubqueryExpression;
import org.apache.spark.sql.catalyst.plans.logical.Command;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.ParsedStatement;
import scala.jdk.javaapi.CollectionConverters;

/**
 * What counts as a write, in a plan, its expressions and its subqueries: any Command except the
 * read-only ones below; the few writing plans that are not Commands (found by scanning every
 * LogicalPlan class of Spark 4.1, Delta 4.4 and Iceberg 1.12); TRANSFORM ... USING (runs a
 * program); reflect/java_method/try_reflect (call any Java method).
 */
final class WritePlans {
    /** Commands that only read, or change nothing but the session's own settings. */
    private static final Set<String> READ_ONLY_COMMANDS = Set.of(
            "SetCommand", "ResetCommand", "SetCatalogAndNamespace", "SetNamespaceCommand",
            "SetCatalogCommand", "ExplainCommand", "NoopCommand");
    private static final String[] READ_ONLY_PREFIXES = {"Show", "Describe"};
    /** Plans that write without being a Command. */
    private static final Set<String> WRITING_PLANS = Set.of(
            "Call", "CreateTable", "InsertIntoDir", "InsertIntoStatement", "WriteFiles",
            "CloneTableStatement", "RestoreTableStatement", "DeltaDelete", "DeltaUpdateTable",
            "ScriptTransformation");
    private static final Set<String> REFLECTION = Set.of("CallMethodViaReflection", "TryReflect");
    private static final Set<String> REFLECTION_FUNCTIONS =
            Set.of("reflect", "java_method", "try_reflect");
    private static final String REFLECTS = " can call any Java method";
    /** SQL names for plans whose class names do not read as the statement. */
    private static final Map<String, String> STATEMENTS = Map.ofEntries(
            Map.entry("AppendData", "INSERT"),
            Map.entry("InsertIntoStatement", "INSERT"),
            Map.entry("InsertIntoHadoopFsRelationCommand", "INSERT"),
            Map.entry("InsertIntoDataSourceCommand", "INSERT"),
            Map.entry("InsertIntoHiveTable", "INSERT"),
            Map.entry("OverwriteByExpression", "INSERT OVERWRITE"),
            Map.entry("OverwritePartitionsDynamic", "INSERT OVERWRITE"),
            Map.entry("InsertIntoDataSourceDirCommand", "INSERT OVERWRITE DIRECTORY"),
            Map.entry("InsertIntoHiveDirCommand", "INSERT OVERWRITE DIRECTORY"),
            Map.entry("DeltaMergeInto", "MERGE INTO"),
            Map.entry("MergeIntoTable", "MERGE INTO"),
            Map.entry("DeleteFromTable", "DELETE"),
            Map.entry("DeltaDelete", "DELETE"),
            Map.entry("UpdateTable", "UPDATE"),
            Map.entry("DeltaUpdateTable", "UPDATE"),
            Map.entry("ReplaceData", "row-level DELETE/UPDATE/MERGE"),
            Map.entry("WriteDelta", "row-level DELETE/UPDATE/MERGE"),
            Map.entry("TruncateTable", "TRUNCATE TABLE"),
            Map.entry("TruncateDeltaTableCommand", "TRUNCATE TABLE"),
            Map.entry("CreateNamespace", "CREATE SCHEMA"),
            Map.entry("DropNamespace", "DROP SCHEMA"),
            Map.entry("AddColumns", "ALTER TABLE ... ADD COLUMNS"),
            Map.entry("SetTableProperties", "ALTER TABLE ... SET TBLPROPERTIES"),
            Map.entry("RenameTable", "ALTER TABLE ... RENAME TO"),
            Map.entry("AddJarsCommand", "ADD JAR"),
            Map.entry("ScriptTransformation", "TRANSFORM ... USING"),
            Map.entry("CallMethodViaReflection", "reflect/java_method"),
            Map.entry("TryReflect", "try_reflect"));

    private WritePlans() {}

    /** "DROP TABLE (DropTable) is a write", or null when the analyzed plan only reads. */
    static String firstWrite(LogicalPlan root) {
        return find(root, WritePlans::writingPlan, WritePlans::reflection);
    }

    /**
     * The same for a plan not yet resolved: CALL, calls of reflection functions, and files read
     * by path (binaryFile.`/proc/self/environ` would show the server's environment, its token
     * included; tables are what analysts query).
     */
    static String firstEarlyWrite(LogicalPlan root) {
        return find(
                root,
                plan -> {
                    String call = procedureCall(plan);
                    return call != null ? call : pathRead(plan);
                },
                WritePlans::reflectionFunction);
    }

    /** The first finding of either check, walking plans, expressions and subqueries. */
    private static String find(
            LogicalPlan root,
            Function<LogicalPlan, String> planCheck,
            Function<Expression, String> expressionCheck) {
        Deque<LogicalPlan> plans = new ArrayDeque<>();
        plans.push(root);
        while (!plans.isEmpty()) {
            LogicalPlan plan = plans.pop();
            String found = planCheck.apply(plan);
            Deque<Expression> expressions = new ArrayDeque<>();
            expressions.addAll(CollectionConverters.asJava(plan.expressions()));
            while (found == null && !expressions.isEmpty()) {
                Expression expression = expressions.pop();
                found = expressionCheck.apply(expression);
                if (expression instanceof SubqueryExpression subquery) {
                    plans.add(subquery.plan());
                }
                expressions.addAll(CollectionConverters.asJava(expression.children()));
            }
            if (found != null) {
                return found;
            }
            plans.addAll(CollectionConverters.asJava(plan.children()));
        }
        return null;
    }

    private static String writingPlan(LogicalPlan plan) {
        String name = plan.getClass().getSimpleName();
        boolean writes = plan instanceof Command
                ? !READ_ONLY_COMMANDS.contains(name) && !hasReadOnlyPrefix(name)
                : WRITING_PLANS.contains(name) || name.startsWith("WriteTo")
                        || plan instanceof ParsedStatement;
        return writes ? describe(name) + " is a write" : null;
    }

    private static boolean hasReadOnlyPrefix(String name) {
        for (String prefix : READ_ONLY_PREFIXES) {
            if (name.startsWith(prefix)) {
                return true;
            }
        }
        return false;
    }

    private static String reflection(Expression expression) {
        String name = expression.getClass().getSimpleName();
        return REFLECTION.contains(name) ? describe(name) + REFLECTS : null;
    }

    private static String procedureCall(LogicalPlan plan) {
        String name = plan.getClass().getSimpleName();
        return name.equals("Call") ? "CALL (Call) is a write" : null;
    }

    /** format.`/a/path` (Spark's SQL on files): any part of the name holding a path. */
    private static String pathRead(LogicalPlan plan) {
        if (plan instanceof UnresolvedRelation relation) {
            for (String part : CollectionConverters.asJava(relation.multipartIdentifier())) {
                if (part.contains("/") || part.contains(":")) {
                    return "reading files by path (" + relation.tableName()
                            + ") is not allowed, query the tables";
                }
            }
        }
        return null;
    }

    private static String reflectionFunction(Expression expression) {
        if (expression instanceof UnresolvedFunction function) {
            String name = function.nameParts().last().toLowerCase(Locale.ROOT);
            if (REFLECTION_FUNCTIONS.contains(name)) {
                return name + "()" + REFLECTS;
            }
        }
        return null;
    }

    /** "DROP TABLE (DropTable)": the SQL statement, then the plan's class name. */
    private static String describe(String className) {
        String name = className.replace("$", ""); // a Scala object: ClearCacheCommand$
        String statement = STATEMENTS.get(name);
        if (statement == null) {
            String words = name.replaceAll("(Command|Statement|Exec)$", "");
            statement = words.replaceAll("(?<=[a-z0-9])(?=[A-Z])", " ").toUpperCase(Locale.ROOT);
        }
        return statement + " (" + name + ")";
    }
}
