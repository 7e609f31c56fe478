package io.lakehouse;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Iterator;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

import io.delta.storage.S3SingleDriverLogStore;

/** Research prototype (docs/design/object-storage.md), not product code. Delta commits on S3A made atomic by the store (PUT with If-None-Match: *). */
public class ConditionalPutLogStore extends S3SingleDriverLogStore {
  static final String CONDITIONAL = "fs.option.create.conditional.overwrite";

  public ConditionalPutLogStore(Configuration conf) { super(conf); }

  @Override
  public void write(Path path, Iterator<String> actions, Boolean overwrite, Configuration conf)
      throws IOException {
    if (overwrite) { super.write(path, actions, true, conf); return; }
    FileSystem fs = path.getFileSystem(conf);
    if (!fs.hasPathCapability(path, CONDITIONAL)) {
      throw new IOException("the store of " + path + " cannot create a file only if absent ("
          + CONDITIONAL + "); Delta commits from several processes would not be safe");
    }
    FSDataOutputStream out = (FSDataOutputStream) fs.createFile(path).overwrite(true).must(CONDITIONAL, true).build();
    try {
      while (actions.hasNext()) {
        out.write((actions.next() + "\n").getBytes(StandardCharsets.UTF_8));
      }
      out.close();
    } catch (IOException e) {
      if (e instanceof InterruptedIOException) throw e;
      if (isPreconditionFailed(e)) {
        System.err.println("ConditionalPutLogStore: " + path + " already exists (412): a concurrent commit");
        throw new java.nio.file.FileAlreadyExistsException(path.toString());
      }
      throw e;
    }
  }

  static boolean isPreconditionFailed(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof org.apache.hadoop.fs.FileAlreadyExistsException) return true;
      String m = String.valueOf(t.getMessage());
      if (m.contains("412") || m.contains("PreconditionFailed")) return true;
    }
    return false;
  }
}
