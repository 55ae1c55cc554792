package org.rpcrdma.bench.verbs;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** One-level JSON objects of numbers and strings: the scale bench's control-channel lines. */
final class FlatJson {
    private static final Pattern MEMBER = Pattern.compile(
            "\"((?:[^\"\\\\]|\\\\.)*)\"\\s*:\\s*(\"((?:[^\"\\\\]|\\\\.)*)\"|[-0-9.eE+]+|true|false|null)");

    private FlatJson() {}

    static String write(Map<String, ?> m) {
        StringBuilder b = new StringBuilder("{");
        for (Map.Entry<String, ?> e : m.entrySet()) {
            if (b.length() > 1) {
                b.append(", ");
            }
            b.append(quote(e.getKey())).append(": ");
            Object v = e.getValue();
            if (v instanceof Number || v instanceof Boolean) {
                b.append(v);
            } else {
                b.append(quote(String.valueOf(v)));
            }
        }
        return b.append('}').toString();
    }

    /** Members as strings (a string's value unquoted and unescaped, a number as written). */
    static Map<String, String> read(String json) {
        Map<String, String> m = new LinkedHashMap<>();
        Matcher x = MEMBER.matcher(json);
        while (x.find()) {
            m.put(unescape(x.group(1)), x.group(3) != null ? unescape(x.group(3)) : x.group(2));
        }
        return m;
    }

    static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                default -> {
                    if (c < 0x20) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        return b.append('"').toString();
    }

    private static String unescape(String s) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c != '\\' || i + 1 == s.length()) {
                b.append(c);
                continue;
            }
            char n = s.charAt(++i);
            switch (n) {
                case 'n' -> b.append('\n');
                case 'u' -> {
                    b.append((char) Integer.parseInt(s.substring(i + 1, i + 5), 16));
                    i += 4;
                }
                default -> b.append(n);
            }
        }
        return b.toString();
    }
}
