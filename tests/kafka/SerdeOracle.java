// Kafka's own serializers as a test oracle for kdump's message decoders.
//
//   java -cp 'KAFKA_LIB/*' tests/kafka/SerdeOracle.java < requests
//
// Each input line is "<generated class> <version> <json>": the JSON is read with Kafka's generated
// <class>JsonConverter at that version, the message is written with its generated write() (the bytes a
// broker puts in the log), and the line printed back is "<hex of those bytes> <JsonConverter.write of the
// message>" - the JSON Kafka's own tools print for it. The bytes are version-prefixed (int16), as a
// coordinator value is on disk. A message Kafka refuses prints "ERROR <reason>".
// Single-file source: the JVM compiles it at launch; nothing compiled is kept.

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.common.protocol.Message;
import org.apache.kafka.common.protocol.MessageUtil;

public class SerdeOracle {
    public static void main(String[] args) throws Exception {
        ObjectMapper mapper = new ObjectMapper();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        StringBuilder out = new StringBuilder();
        for (String line; (line = in.readLine()) != null; ) {
            String[] parts = line.split(" ", 3);
            try {
                out.append(answer(mapper, parts[0], Short.parseShort(parts[1]), parts[2]));
            } catch (InvocationTargetException e) {
                out.append("ERROR ").append(e.getCause());
            } catch (RuntimeException e) {
                out.append("ERROR ").append(e);
            }
            out.append('\n');
        }
        System.out.print(out);
    }

    private static String answer(ObjectMapper mapper, String className, short version, String json)
            throws Exception {
        Class<?> messageClass = Class.forName(className);
        Class<?> converter = Class.forName(className + "JsonConverter");
        Method read = converter.getMethod("read", JsonNode.class, short.class);
        Method write = converter.getMethod("write", messageClass, short.class);
        Message message = (Message) read.invoke(null, mapper.readTree(json), version);
        // The framing of a coordinator value in the log: int16 version, then the message.
        StringBuilder hex = new StringBuilder();
        for (byte b : MessageUtil.toVersionPrefixedBytes(version, message)) {
            hex.append(String.format("%02x", b));
        }
        return hex + " " + write.invoke(null, message, version);
    }
}
